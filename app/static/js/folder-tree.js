// The folder picker: a tree the user opens level by level, fed by GET /api/v1/folders (only
// folders holding documents this user can read, counted under the other filters). On the
// keyboard it is one Tab stop (the WAI-ARIA tree pattern): arrows move, Right opens, Left closes
// or goes up, Enter or Space picks, Home and End jump.
import { getJson } from "./api.js";
import { $, el, rerender } from "./dom.js";

export class FolderTree {
  constructor(onToggle) {
    this.onToggle = onToggle; // (folder, selected) => void
    this.expanded = new Set();
    this.children = new Map(); // parent -> [{path, name, count, has_children}]
    this.filterParams = null; // the filters the shown counts are for
    this.shownFor = null; // and the token
    this.selected = [];
    this.token = "";
    this.generation = 0;
    this.current = null; // the folder holding the tree's one Tab stop
    this.shownSelected = null; // the selection the tree shows
    $("folder-tree").addEventListener("keydown", (e) => this.onKey(e));
    $("folder-tree").addEventListener("focusin", (e) => {
      const li = e.target.closest('[role="treeitem"]');
      if (li && li.dataset.path !== this.current) {
        this.current = li.dataset.path;
        this.items();
      }
    });
  }

  /** The service could not be asked: say so rather than show counts of an older search. */
  unavailable() {
    this.generation += 1;
    this.children = new Map([["/", null]]);
    this.filterParams = null;
    this.render();
  }

  /** Fetch every level again at the next refresh. */
  forget() {
    this.filterParams = null;
  }

  /** New filters: counts change, so every open level is fetched again (only then). */
  async refresh(token, filterParams, selected) {
    this.token = token;
    this.selected = selected;
    const unchanged = token === this.shownFor && filterParams === this.filterParams;
    if (unchanged && Array.isArray(this.children.get("/"))) {
      const picked = selected.join("\n");
      if (picked !== this.shownSelected) this.render(); // same counts, another selection
      return;
    }
    const generation = ++this.generation;
    const parents = ["/", ...[...this.expanded].sort()];
    const levels = await Promise.all(parents.map((p) => this.fetchLevel(p, filterParams)));
    if (generation !== this.generation) return; // a newer refresh owns the tree
    this.filterParams = filterParams;
    this.shownFor = token;
    this.children = new Map(parents.map((p, i) => [p, levels[i]]));
    this.render();
  }

  async fetchLevel(parent, filterParams) {
    const params = new URLSearchParams(filterParams);
    params.set("parent", parent);
    try {
      const body = await getJson("/api/v1/folders?" + params.toString(), this.token);
      return body.folders || [];
    } catch {
      return null; // shown as "could not be loaded" for that level
    }
  }

  async toggleOpen(path) {
    if (this.expanded.has(path)) {
      this.expanded.delete(path);
    } else {
      this.expanded.add(path);
      if (!this.children.has(path)) this.children.set(path, await this.fetchLevel(path, this.filterParams));
    }
    this.render();
  }

  render() {
    this.shownSelected = this.selected.join("\n");
    const root = $("folder-tree");
    rerender(root, () => this.fill(root));
    this.items();
  }

  fill(root) {
    root.textContent = "";
    const top = this.children.get("/");
    if (top === null) root.append(el("li", { class: "empty-note", text: "Folders could not be loaded." }));
    else if (top && !top.length && !this.selected.length) root.append(el("li", { class: "empty-note", text: "No folders in these results." }));
    else root.append(...this.level(top || [], 1));
    // A selected folder outside the listed ones (typed, or from a link) still shows, to untick.
    const listed = new Set([...this.children.values()].flat().filter(Boolean).map((f) => f.path));
    for (const path of this.selected) {
      if (!listed.has(path)) root.append(this.item({ path, name: path, count: 0, has_children: false }, 1));
    }
  }

  level(folders, depth) {
    return folders.map((folder) => this.item(folder, depth));
  }

  item(folder, depth) {
    const open = this.expanded.has(folder.path);
    const selected = this.selected.includes(folder.path);
    const li = el("li", {
      role: "treeitem",
      "aria-level": depth,
      "aria-expanded": folder.has_children ? String(open) : null,
      "aria-selected": String(selected),
      "aria-label": `${folder.name}, ${folder.count.toLocaleString()} documents`,
      "data-path": folder.path,
      "data-focus-key": "item " + folder.path,
      tabindex: "-1",
    });
    const row = el(
      "div",
      { class: "tree-row" },
      el("button", {
        type: "button",
        class: "twisty" + (folder.has_children ? "" : " leaf"),
        "data-twisty": folder.path,
        "aria-hidden": "true",
        tabindex: "-1",
        text: open ? "▾" : "▸",
        onclick: () => this.toggleOpen(folder.path),
      }),
      el(
        "button",
        {
          type: "button",
          class: "folder",
          "data-folder": folder.path,
          "aria-pressed": String(selected),
          tabindex: "-1",
          title: folder.path,
          onclick: () => this.onToggle(folder.path, !selected),
        },
        el("span", { text: folder.name }),
        el("span", { class: "count", text: folder.count.toLocaleString() })
      )
    );
    li.append(row);
    if (open && folder.has_children) {
      const kids = this.children.get(folder.path);
      const group = el("ul", { role: "group" });
      if (kids === null) group.append(el("li", { class: "empty-note", text: "Could not be loaded." }));
      else group.append(...this.level(kids || [], depth + 1));
      li.append(group);
    }
    return li;
  }

  /** The visible items in order, and the one Tab stop among them. */
  items() {
    const all = [...$("folder-tree").querySelectorAll('[role="treeitem"]')];
    for (const li of all) li.tabIndex = -1;
    const stop = all.find((li) => li.dataset.path === this.current) || all[0];
    if (stop) stop.tabIndex = 0;
    return all;
  }

  onKey(e) {
    const li = e.target.closest('[role="treeitem"]');
    if (!li) return;
    const all = this.items();
    const at = all.indexOf(li);
    const path = li.dataset.path;
    const open = li.getAttribute("aria-expanded");
    const move = (target) => { if (target) this.focus(target); };
    const keys = {
      ArrowDown: () => move(all[at + 1]),
      ArrowUp: () => move(all[at - 1]),
      Home: () => move(all[0]),
      End: () => move(all[all.length - 1]),
      ArrowRight: () => {
        if (open === "false") this.toggleOpen(path);
        else if (open === "true") move(all[at + 1]);
      },
      ArrowLeft: () => {
        if (open === "true") this.toggleOpen(path);
        else move(li.parentElement.closest('[role="treeitem"]'));
      },
      Enter: () => this.onToggle(path, li.getAttribute("aria-selected") !== "true"),
      " ": () => this.onToggle(path, li.getAttribute("aria-selected") !== "true"),
    };
    if (!(e.key in keys)) return;
    e.preventDefault();
    this.current = path;
    keys[e.key]();
  }

  focus(li) {
    this.current = li.dataset.path;
    this.items();
    li.focus();
  }
}
