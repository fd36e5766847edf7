"""The `tandem` command: launch MPI programs with libtandem preloaded."""

__version__ = "0.1.0"
