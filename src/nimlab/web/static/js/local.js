// What this browser remembers: seat tokens (the seats it plays), share links it made, its last setup.

const PREFIX = "nimlab.";

function read(key, fallback) {
  try {
    const text = localStorage.getItem(PREFIX + key);
    return text ? JSON.parse(text) : fallback;
  } catch { return fallback; }
}
function write(key, value) {
  try { localStorage.setItem(PREFIX + key, JSON.stringify(value)); } catch { /* private mode */ }
}

/** {seat: token} for the seats this browser plays in a game. */
export const tokensFor = (gameId) => read(`tokens.${gameId}`, {});
export function saveToken(gameId, seat, token) {
  const tokens = tokensFor(gameId);
  tokens[seat] = token;
  write(`tokens.${gameId}`, tokens);
}
/** The token that stops a game of bots only this browser started (or null). */
export const ownerTokenFor = (gameId) => read(`owner.${gameId}`, null);
export const saveOwnerToken = (gameId, token) => write(`owner.${gameId}`, token);
/** {seat: link} for seats whose players were invited from this browser. */
export const invitesFor = (gameId) => read(`invites.${gameId}`, {});
export const saveInvites = (gameId, invites) => write(`invites.${gameId}`, invites);

export const lastSetup = () => read("setup", null);
export const saveSetup = (setup) => write("setup", setup);

/** How long a bot's move is shown before it is played out on the board (ms). */
export function animationMs() {
  const forced = read("anim", null);
  if (typeof forced === "number") return forced;
  return matchMedia("(prefers-reduced-motion: reduce)").matches ? 150 : 900;
}

/** The stored game's id of a finished game in play (so its link leads to the replay later). */
export const savedAs = (gameId) => read(`saved.${gameId}`, null);
export const saveSavedAs = (gameId, id) => write(`saved.${gameId}`, id);

/** Whether the first player of a game was drawn at random (the setup said so). */
export const randomFirst = (gameId) => read(`random.${gameId}`, false);
export const saveRandomFirst = (gameId) => write(`random.${gameId}`, true);

/** What this browser notes about a game it plays (for "Your games" on the setup screen):
 * {players, description, status, over, at}. */
export const gameNote = (gameId) => read(`note.${gameId}`, null);
export const saveGameNote = (gameId, note) => write(`note.${gameId}`, note);

/** The games this browser plays a seat of and has not seen end, newest first: [{id, ...note}]. */
export function myUnfinishedGames() {
  const out = [];
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(`${PREFIX}tokens.`)) continue;
      const id = key.slice(`${PREFIX}tokens.`.length);
      const note = gameNote(id);
      if (savedAs(id) || (note && (note.over || note.gone))) continue;
      out.push({ id, ...(note || {}) });
    }
  } catch { /* private mode */ }
  return out.sort((a, b) => (b.at || 0) - (a.at || 0));
}
