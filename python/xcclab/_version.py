"""The package's version, in a module of its own so that the modules ``xcclab`` re-exports can
read it without importing the package that imports them."""

__version__ = "0.1.0"
