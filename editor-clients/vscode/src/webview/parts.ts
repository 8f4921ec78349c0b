/**
 * The chat's DOM kept in step with its state, piece by piece: an element whose content did not
 * change is left alone, one that has parts of its own is changed in place (so what the user
 * selected, scrolled, folded or focused inside it stays), anything else is built again.
 */

/**
 * One child of an element, kept in step with the state: left alone while its signature (what it
 * shows) is unchanged, changed in place by `patch` when it has one (what the user selected,
 * scrolled or focused inside it stays), else built again.
 */
export interface Part {
  key: string;
  signature: string;
  build(): HTMLElement;
  patch?(element: HTMLElement): void;
}

/** A part rebuilt whenever what it `shows` changes. */
export function part(key: string, shows: unknown, build: () => HTMLElement): Part {
  return { key, signature: JSON.stringify(shows), build };
}

/**
 * A part whose element stays: `update` sets its attributes and renders its children as parts;
 * `created` (listeners) runs once, when it is built.
 */
export function containerPart(key: string, shows: unknown, tag: string, update: (element: HTMLElement) => void,
  created?: (element: HTMLElement) => void): Part {
  return {
    key, signature: JSON.stringify(shows), patch: update,
    build() {
      const element = document.createElement(tag);
      created?.(element);
      update(element);
      return element;
    },
  };
}

/** The children of one element as a keyed list of parts, in order. */
export class PartList {
  private readonly rendered = new Map<string, { element: HTMLElement; signature: string }>();

  constructor(private readonly container: HTMLElement) {}

  render(parts: readonly Part[]): void {
    const keep = new Set<string>();
    let previous: Element | null = null;
    for (const part of parts) {
      keep.add(part.key);
      const element = this.elementFor(part);
      const expected: Element | null = previous ? previous.nextElementSibling : this.container.firstElementChild;
      if (expected !== element) this.container.insertBefore(element, expected);
      previous = element;
    }
    for (const [key, { element }] of this.rendered) {
      if (!keep.has(key)) {
        element.remove();
        this.rendered.delete(key);
      }
    }
  }

  private elementFor(part: Part): HTMLElement {
    const known = this.rendered.get(part.key);
    if (known && known.signature === part.signature) return known.element;
    if (known && part.patch) {
      part.patch(known.element);
      known.signature = part.signature;
      return known.element;
    }
    const element = part.build();
    known?.element.replaceWith(element);
    this.rendered.set(part.key, { element, signature: part.signature });
    return element;
  }
}

const partLists = new WeakMap<HTMLElement, PartList>();

/** Render `element`'s children as `parts` (see {@link PartList}). */
export function renderParts(element: HTMLElement, parts: readonly Part[]): void {
  let list = partLists.get(element);
  if (!list) {
    list = new PartList(element);
    partLists.set(element, list);
  }
  list.render(parts);
}

/** Set attributes that changed (an unchanged one is not touched). */
export function setAttributes(element: HTMLElement, attributes: Record<string, string>): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (element.getAttribute(name) !== value) element.setAttribute(name, value);
  }
}
