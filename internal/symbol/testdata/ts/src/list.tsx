import { Item, Task, byId } from "./model";

declare namespace JSX {
  interface IntrinsicElements { [name: string]: any }
}

export function List(props: { items: Item[] }) {
  return <ul>{props.items.map((it) => <li key={it.id}>{it.label()}</li>)}</ul>;
}

export function First() {
  const t = byId([new Task(1, "write")], 1);
  return <List items={t ? [t] : []} />;
}
