"""The one exception type a user should ever see: the CLI prints its message on one line and exits 2."""


class LocalcrError(Exception):
    """A problem with the user's input, files or models, phrased as what to do about it."""
