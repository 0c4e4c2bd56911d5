"""The web app (``nimlab serve``): set up, play, analyse and keep games in the browser.

>>> from nimlab.web import create_app
>>> app = create_app(":memory:")
"""

from nimlab.web.app import create_app
from nimlab.web.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
