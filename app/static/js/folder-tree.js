// The folder picker: a tree the user opens level by level, fed by GET /api/v1/folders (only
// folders holding documents this user can read, counted under the other filters).
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
  }

  /** New filters: counts change, so every open level is fetched again (only then). */
  async refresh(token, filterParams, selected) {
    this.token = token;
    this.selected = selected;
    const unchanged = token === this.shownFor && filterParams === this.filterParams;
    if (unchanged && Array.isArray(this.children.get("/"))) {
      this.render(); // same counts: only the selection may have changed
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
    const root = $("folder-tree");
    rerender(root, () => this.fill(root));
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
    });
    const row = el(
      "div",
      { class: "tree-row" },
      el("button", {
        type: "button",
        class: "twisty" + (folder.has_children ? "" : " leaf"),
        "data-twisty": folder.path,
        "data-focus-key": "open " + folder.path,
        "aria-label": (open ? "Close " : "Open ") + folder.path,
        tabindex: folder.has_children ? null : "-1",
        text: open ? "▾" : "▸",
        onclick: () => this.toggleOpen(folder.path),
      }),
      el(
        "button",
        {
          type: "button",
          class: "folder",
          "data-folder": folder.path,
          "data-focus-key": folder.path,
          "aria-pressed": String(selected),
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
}
