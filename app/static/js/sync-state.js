// The signed-in user's Nextcloud sync, beside their name: from GET /api/v1/vector-sync/status
// (its `nextcloud` line for this user), refreshed every 5 s while the first index runs and every
// half minute after. Hidden without the connector or when the user is not connected.
import { getJson } from "./api.js";

const REFRESH_MS = 30_000;
const REFRESH_SYNCING_MS = 5_000;
let timer = null;
let generation = 0; // a sign-out stops a refresh that is still on its way

export function describe(line) {
  const files = (n) => `${n} file${n === 1 ? "" : "s"}`;
  const lag = line.lag_seconds >= 60 ? `, ${Math.round(line.lag_seconds / 60)} min behind` : "";
  switch (line.state) {
    case "syncing":
      return `Nextcloud: first index running (${files(line.indexed)} so far)`;
    case "ok":
      return `Nextcloud: up to date (${files(line.indexed)}${lag})`;
    case "failing":
      return `Nextcloud: sync failing${line.last_error ? ": " + line.last_error : ""}${lag}`;
    case "revoked":
      return "Nextcloud: access revoked, connect again";
    default:
      return `Nextcloud: ${line.state}`;
  }
}

export function followSyncState(token, user, target) {
  stopSyncState();
  const mine = generation;
  const show = async () => {
    let next = REFRESH_MS;
    try {
      const status = await getJson("/api/v1/vector-sync/status", token);
      if (mine !== generation) return;
      const line = status.nextcloud && status.nextcloud.users.find((u) => u.user_id === user);
      target.hidden = !line;
      if (line) {
        target.textContent = describe(line);
        target.dataset.state = line.state;
        if (line.state === "syncing") next = REFRESH_SYNCING_MS;
      }
      if (!status.nextcloud) return; // no connector: nothing to follow
    } catch {
      target.hidden = true;
    }
    timer = setTimeout(show, next);
  };
  show();
}

export function stopSyncState() {
  generation += 1;
  if (timer !== null) clearTimeout(timer);
  timer = null;
}
