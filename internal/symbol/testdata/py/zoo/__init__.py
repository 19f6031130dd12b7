from zoo.animals import Animal, Dog
from zoo.keeper import Keeper

__all__ = ["Animal", "Dog", "Keeper"]
