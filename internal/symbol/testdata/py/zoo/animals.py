"""Animals of the zoo."""


class Animal:
    """Anything that speaks."""

    def __init__(self, name: str) -> None:
        self.name = name

    def speak(self) -> str:
        """What the animal says."""
        raise NotImplementedError


class Dog(Animal):
    def speak(self) -> str:
        return "woof"


class Cat(Animal):
    def speak(self) -> str:
        return "miaou, « ça » 😀"
