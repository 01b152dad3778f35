"""Offers: what a GPU costs to rent (cloud instances) or to buy (street, used, launch)."""
