from nimlab.cli import main

main()
