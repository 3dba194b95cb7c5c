"""The ``gpu`` device on CuPy (see README.md); cupy is imported when a gpu is first used."""
