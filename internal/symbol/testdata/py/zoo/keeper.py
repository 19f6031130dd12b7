from zoo.animals import Animal, Cat, Dog


class Keeper:
    def __init__(self) -> None:
        self.animals: list[Animal] = []

    def adopt(self, a: Animal) -> None:
        self.animals.append(a)

    def chorus(self) -> str:
        return " ".join(a.speak() for a in self.animals)


def morning() -> str:
    k = Keeper()
    k.adopt(Dog("rex"))
    k.adopt(Cat("tom"))
    return k.chorus()
