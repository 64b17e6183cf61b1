// Calls to the service, with the token kept for this tab (sessionStorage, never the URL).

const TOKEN_KEY = "astrolabe_token";

export class ApiError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field || null;
  }
}

/** "Bearer abc" (as a curl line writes it), the signed-in link `serve --dev` prints
 * (`http://.../viz#token=abc`) and stray spaces or quotes are accepted. */
export function cleanToken(raw) {
  const link = /[#&]token=([^&\s"']+)/.exec(raw);
  if (link) return decodeURIComponent(link[1]);
  return raw.trim().replace(/^["']|["']$/g, "").replace(/^bearer\s+/i, "").trim();
}

export const savedToken = () => sessionStorage.getItem(TOKEN_KEY) || "";
export const saveToken = (token) => sessionStorage.setItem(TOKEN_KEY, token);
export const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

export async function getJson(path, token, signal) {
  let response;
  try {
    response = await fetch(path, {
      headers: { Authorization: "Bearer " + token, Accept: "application/json" },
      signal,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(0, "The service did not answer (" + err.message + "). Is it running?");
  }
  const body = await response.json().catch(() => null);
  if (response.ok && body) return body;
  const info = (body && body.error) || {};
  const message =
    (typeof info === "object" && info.message) ||
    (typeof info === "string" && info) ||
    `The service answered HTTP ${response.status}`;
  throw new ApiError(response.status, message, info.field);
}

/** Who the token is: {sub, groups, scopes}; throws ApiError (401 for a bad token). */
export const whoAmI = (token) => getJson("/api/v1/me", token);
