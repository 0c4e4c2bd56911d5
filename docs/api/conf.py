"""Sphinx configuration of nimlab's API reference (built by scripts/docs from the docstrings)."""

project = "nimlab"
author = "nimlab"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
# The docstrings cross-reference one another; names outside the reference (NumPy arrays, private
# helpers, the standard library) are not targets, and that is no error.
nitpicky = False
suppress_warnings = ["ref.python"]
html_theme = "alabaster"
html_title = "nimlab API reference"
exclude_patterns = ["_build"]
# The theory's docstrings write the size of a set as |Q| or |T|, which reStructuredText reads
# as a substitution: define each as itself.
rst_prolog = "\n".join(f".. |{name}| replace:: \\|{name}\\|" for name in ("Q", "T", "S", "K"))
