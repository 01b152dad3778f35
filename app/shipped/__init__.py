"""Code that reads the folders shipped with the package (data/, templates/, ...)."""
