// Talking to the server: JSON in and out, big integers kept exact, errors as ApiError.

import { setOnline } from "./dom.js";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

/** JSON.parse that turns integers beyond 2^53 into BigInt (where the browser gives the source). */
export function parseJSON(text) {
  return JSON.parse(text, function (key, value, context) {
    if (typeof value === "number" && !Number.isSafeInteger(value) && context && /^-?\d+$/.test(context.source)) {
      return BigInt(context.source);
    }
    return value;
  });
}

/** JSON.stringify that writes BigInt as a plain JSON integer. */
export function toJSON(value) {
  return JSON.stringify(value, (key, v) => (typeof v === "bigint" ? `\u0000big${v}` : v))
    .replace(/"\\u0000big(-?\d+)"/g, "$1");
}

/** Call the API; resolves with the parsed body, or throws ApiError with the server's message. */
export async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = toJSON(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    setOnline(false);
    throw new ApiError(0, "the server cannot be reached: is nimlab serve still running?");
  }
  setOnline(true);
  const text = await response.text();
  let data = null;
  try { data = text ? parseJSON(text) : null; } catch { data = null; }
  if (!response.ok) {
    throw new ApiError(response.status, (data && data.detail) || `${response.status} ${response.statusText}`);
  }
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);
export const del = (path, body) => api("DELETE", path, body);
