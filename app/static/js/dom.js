// Small DOM helpers: text goes in as text, never as HTML.

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "style") for (const [k, v] of Object.entries(value)) node.style.setProperty(k, v);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Text parts [{text, mark}] as nodes, marked parts in <mark>. */
export const marked = (parts) => parts.map((p) => (p.mark ? el("mark", { text: p.text }) : p.text));

export function setFieldError(input, box, message) {
  box.textContent = message || "";
  if (input) {
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
}

/**
 * Rebuild `container` with `render()` without losing the keyboard focus inside it: the element
 * with the same `data-focus-key` gets it back, else the one at the same position among the
 * container's focusable elements, else the one before, else `fallback`.
 */
export function rerender(container, render, fallback = null) {
  const active = document.activeElement;
  const inside = active && active !== document.body && container.contains(active);
  const focusable = () => [...container.querySelectorAll("button, input, [tabindex]")];
  const key = inside ? active.dataset.focusKey : undefined;
  const position = inside ? focusable().indexOf(active) : -1;
  render();
  if (!inside) return;
  const all = focusable();
  const same = key !== undefined ? all.find((node) => node.dataset.focusKey === key) : null;
  const target = same || all[position] || all[position - 1] || fallback;
  if (target) target.focus();
}
