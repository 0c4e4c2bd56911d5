"""The web app (``nimlab serve``): set up, play, analyse and keep games in the browser.

>>> from nimlab.web import create_app
>>> app = create_app(":memory:")
"""

from nimlab.web.app import create_app

__all__ = ["create_app"]
