from nimlab._start import main

main()
