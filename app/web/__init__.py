"""Server-rendered pages: the question form, the answer, the catalog, this machine.

Pages call the same services as the JSON API; they never import SQLAlchemy.
"""
