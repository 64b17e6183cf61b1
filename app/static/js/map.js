// The result map: PCA of the results' embeddings in 2D (with axes) or 3D (drag or swipe to
// rotate). Points are reachable by keyboard (arrow keys on the focused map) and by tap.
import { colorFor } from "./palette.js";

const HIT_RADIUS = 14; // px: a finger's tap lands within this of a point

export class ResultMap {
  constructor(canvas, tooltip, empty, onSelect) {
    this.canvas = canvas;
    this.tooltip = tooltip;
    this.empty = empty;
    this.onSelect = onSelect;
    this.data = null;
    this.mode = "2d";
    this.selected = -1;
    this.hover = -1;
    this.projected = [];
    this.rot = { yaw: 0.6, pitch: -0.35 };
    this.drag = null;
    this.wire();
  }

  setData(data) {
    this.data = data;
    this.selected = -1;
    this.hover = -1;
    this.hideTip();
    this.draw();
  }

  setMode(mode) {
    this.mode = mode;
    this.canvas.classList.toggle("mode3d", mode === "3d");
    this.draw();
  }

  select(index) {
    this.selected = index;
    this.draw();
    if (index >= 0 && document.activeElement === this.canvas) this.showTip(index);
  }

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const rect = this.canvas.getBoundingClientRect();
    this.canvas.width = Math.max(1, Math.round(rect.width * dpr));
    this.canvas.height = Math.max(1, Math.round(rect.height * dpr));
    this.draw();
  }

  points() {
    const d = this.data;
    if (!d) return { pts: [], query: null };
    const is3d = this.mode === "3d";
    const pts = (is3d ? d.coordinates_3d : d.coordinates_2d) || [];
    const n = Math.min(pts.length, (d.results || []).length);
    return { pts: pts.slice(0, n), query: (is3d ? d.query_coords_3d : d.query_coords_2d) || null };
  }

  draw() {
    const ctx = this.canvas.getContext("2d");
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.width / dpr;
    const h = this.canvas.height / dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const { pts, query } = this.points();
    this.empty.hidden = !(this.data && pts.length < 2);
    this.projected = [];
    if (pts.length < 2) return;
    const proj = this.mode === "3d" ? this.project3d(pts, query, w, h) : project2d(pts, query, w, h);
    if (proj.axes) drawAxes3d(ctx, proj.axes);
    else this.canvas.dataset.axes = drawAxes2d(ctx, w, h, this.data.pca_variance || []).join(" | ");
    this.projected = proj.pts;
    const order = proj.pts.map((_, i) => i).sort((a, b) => proj.pts[a].z - proj.pts[b].z);
    for (const i of order) this.drawPoint(ctx, proj.pts[i], colorFor(this.data.results[i].doc_type), i);
    if (proj.query) drawStar(ctx, proj.query.x, proj.query.y, 9);
  }

  project3d(pts, query, w, h) {
    const all = query ? pts.concat([query]) : pts;
    const center = [0, 1, 2].map((k) => all.reduce((s, p) => s + (p[k] || 0), 0) / all.length);
    const radius = Math.max(
      1e-9,
      ...all.map((p) => Math.hypot(p[0] - center[0], p[1] - center[1], (p[2] || 0) - center[2]))
    );
    const scale = (Math.min(w, h) / 2 - 28) / radius;
    const { yaw, pitch } = this.rot;
    const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
    const f = (p) => {
      const x = p[0] - center[0], y = p[1] - center[1], z = (p[2] || 0) - center[2];
      const x1 = x * cy + z * sy, z1 = -x * sy + z * cy;
      const y2 = y * cp - z1 * sp, z2 = y * sp + z1 * cp;
      return { x: w / 2 + x1 * scale, y: h / 2 - y2 * scale, z: z2 / radius };
    };
    const origin = f(center);
    const axes = [0, 1, 2].map((k) => {
      const end = center.slice();
      end[k] += radius * 0.35;
      return { from: origin, to: f(end), label: "PC" + (k + 1) };
    });
    return { pts: pts.map(f), query: query ? f(query) : null, axes };
  }

  drawPoint(ctx, p, color, i) {
    const depth = this.mode === "3d" ? 1 + p.z * 0.35 : 1;
    const active = i === this.selected || i === this.hover;
    const r = (active ? 8 : 5.5) * depth;
    ctx.globalAlpha = this.mode === "3d" ? 0.7 + (0.3 * (p.z + 1)) / 2 : 0.92;
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
    ctx.fill();
    ctx.globalAlpha = 1;
    if (i === this.selected) {
      ctx.strokeStyle = "#1d2330";
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(p.x, p.y, r + 3, 0, Math.PI * 2);
      ctx.stroke();
    }
  }

  hitTest(evt) {
    const rect = this.canvas.getBoundingClientRect();
    const x = evt.clientX - rect.left;
    const y = evt.clientY - rect.top;
    let best = -1;
    let bestDist = evt.pointerType === "touch" ? HIT_RADIUS * 1.5 : HIT_RADIUS;
    this.projected.forEach((p, i) => {
      const d = Math.hypot(p.x - x, p.y - y);
      if (d <= bestDist) { best = i; bestDist = d; }
    });
    return best;
  }

  showTip(index) {
    const r = this.data && this.data.results[index];
    const p = this.projected[index];
    if (!r || !p) { this.hideTip(); return; }
    this.tooltip.textContent = (r.title || "(untitled)") + " · " + r.doc_type;
    this.tooltip.hidden = false;
    const maxLeft = this.canvas.clientWidth - this.tooltip.offsetWidth - 4;
    this.tooltip.style.left = Math.max(4, Math.min(p.x + 12, maxLeft)) + "px";
    this.tooltip.style.top = Math.max(0, p.y - 34) + "px";
  }

  hideTip() {
    this.tooltip.hidden = true;
  }

  wire() {
    const c = this.canvas;
    c.addEventListener("pointerdown", (e) => {
      this.drag = { x: e.clientX, y: e.clientY, moved: false };
      if (this.mode === "3d") {
        c.setPointerCapture(e.pointerId);
        c.classList.add("dragging");
      }
    });
    c.addEventListener("pointermove", (e) => {
      if (this.drag && this.mode === "3d") { this.rotate(e); return; }
      if (e.pointerType !== "mouse") return;
      const index = this.hitTest(e);
      if (index !== this.hover) { this.hover = index; this.draw(); }
      if (index >= 0) this.showTip(index); else this.hideTip();
    });
    c.addEventListener("pointerup", (e) => {
      const drag = this.drag;
      this.drag = null;
      c.classList.remove("dragging");
      if (drag && drag.moved) return;
      const index = this.hitTest(e);
      if (index < 0) { this.hideTip(); return; }
      this.selected = index;
      this.draw();
      this.showTip(index); // a tap has no hover: the tooltip comes with the tap
      this.onSelect(index);
    });
    c.addEventListener("pointercancel", () => { this.drag = null; c.classList.remove("dragging"); });
    c.addEventListener("pointerleave", (e) => {
      if (this.drag || e.pointerType !== "mouse") return;
      this.hideTip();
      if (this.hover >= 0) { this.hover = -1; this.draw(); }
    });
    c.addEventListener("keydown", (e) => this.onKey(e));
    c.addEventListener("blur", () => this.hideTip());
  }

  rotate(e) {
    const dx = e.clientX - this.drag.x;
    const dy = e.clientY - this.drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) this.drag.moved = true;
    this.rot.yaw += dx * 0.01;
    this.rot.pitch = Math.max(-1.5, Math.min(1.5, this.rot.pitch + dy * 0.01));
    this.drag.x = e.clientX;
    this.drag.y = e.clientY;
    this.hideTip();
    this.draw();
  }

  onKey(e) {
    const n = this.projected.length;
    if (!n) return;
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (step) {
      e.preventDefault();
      const next = this.selected < 0 ? (step > 0 ? 0 : n - 1) : (this.selected + step + n) % n;
      this.selected = next;
      this.draw();
      this.showTip(next);
      this.onSelect(next, { focus: false });
    } else if (e.key === "Enter" && this.selected >= 0) {
      e.preventDefault();
      this.onSelect(this.selected, { focus: true });
    } else if (e.key === "Escape") {
      this.hideTip();
    }
  }
}

function project2d(pts, query, w, h) {
  const all = query ? pts.concat([query]) : pts;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
  const padLeft = 34, pad = 18, padBottom = 30;
  const spanX = maxX - minX || 1, spanY = maxY - minY || 1;
  const sx = (w - padLeft - pad) / spanX;
  const sy = (h - pad - padBottom) / spanY;
  const f = (p) => ({ x: padLeft + (p[0] - minX) * sx, y: h - padBottom - (p[1] - minY) * sy, z: 0 });
  return { pts: pts.map(f), query: query ? f(query) : null };
}

/** "PC1 (62% of variance)"; "" for a component along which the results do not spread (two
 * results lie on one line: their second component is empty). */
export function axisLabel(i, variance) {
  const share = variance[i];
  if (share === undefined) return `PC${i + 1}`;
  if (share < 0.005) return "";
  return `PC${i + 1} (${(share * 100).toFixed(0)}% of variance)`;
}

/** Draws the axes; returns their labels. */
function drawAxes2d(ctx, w, h, variance) {
  const left = 26, bottom = h - 22;
  ctx.strokeStyle = "#8b95a7";
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(left, 10);
  ctx.lineTo(left, bottom);
  ctx.lineTo(w - 10, bottom);
  ctx.stroke();
  ctx.fillStyle = "#475467"; // 7.7:1 on the map's background
  ctx.font = "12px system-ui, sans-serif";
  const labels = [axisLabel(0, variance), axisLabel(1, variance)];
  ctx.textAlign = "right";
  if (labels[0]) ctx.fillText(labels[0] + " →", w - 10, h - 6);
  if (labels[1]) {
    ctx.save();
    ctx.translate(14, 10);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(labels[1] + " →", 0, 0);
    ctx.restore();
  }
  ctx.textAlign = "left";
  return labels;
}

function drawAxes3d(ctx, axes) {
  ctx.lineWidth = 1;
  ctx.font = "12px system-ui, sans-serif";
  for (const a of axes) {
    ctx.strokeStyle = "#8b95a7";
    ctx.beginPath();
    ctx.moveTo(a.from.x, a.from.y);
    ctx.lineTo(a.to.x, a.to.y);
    ctx.stroke();
    ctx.fillStyle = "#475467";
    ctx.fillText(a.label, a.to.x + 3, a.to.y - 3);
  }
}

function drawStar(ctx, x, y, r) {
  ctx.beginPath();
  for (let k = 0; k < 10; k++) {
    const rad = k % 2 ? r * 0.45 : r;
    const a = -Math.PI / 2 + (k * Math.PI) / 5;
    ctx.lineTo(x + rad * Math.cos(a), y + rad * Math.sin(a));
  }
  ctx.closePath();
  ctx.fillStyle = "#1d2330";
  ctx.fill();
  ctx.strokeStyle = "#fff";
  ctx.lineWidth = 1.5;
  ctx.stroke();
}
