export interface Item {
  id: number;
  label(): string;
}

export class Task implements Item {
  constructor(public id: number, private title: string) {}
  label(): string {
    return `#${this.id} ${this.title}`;
  }
}

export class Note implements Item {
  constructor(public id: number) {}
  label(): string {
    return "note " + this.id;
  }
}

export function byId<T extends Item>(items: T[], id: number): T | undefined {
  return items.find((it) => it.id === id);
}
