// kibitz analysis page. Plain JavaScript against the public API; no game rules here: legal moves come from
// /v1/moves, pictures from /v1/board.svg, lines from /v1/stream.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG_NS = "http://www.w3.org/2000/svg";

const state = {
  games: [],
  game: null, // the entry of /v1/games
  root: null, // the position the moves start from, as the user gave it (null: the start position)
  line: [], // moves from the root
  cursor: 0, // moves of `line` on the board
  legal: [], // legal moves at the cursor
  position: "", // the position at the cursor, in the game's main format
  sideToMove: "",
  outcome: null,
  flipped: false,
  squares: [], // square names of the drawn board, longest first
  selected: null, // the square or piece clicked first
  boardAvailable: true,
  analysing: true,
  analysisId: null,
  lines: [], // by multipv - 1: {score, depth, pv}
  searchInfo: null,
  arrowMove: null,
  version: 0, // bumps at each position change; stale answers are dropped
  job: null, // the annotation job followed
  jobView: null,
  annotatedGame: 0,
  annotatedPly: null,
};

// ---- the API ----

function apiKey() {
  return localStorage.getItem("kibitz.key") || "";
}

function headers(extra) {
  const h = Object.assign({}, extra || {});
  const key = apiKey();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

// A problem document (RFC 9457) or any failed answer as one readable sentence.
async function problemText(response) {
  let text = response.status + " " + response.statusText;
  try {
    const body = await response.json();
    if (body && body.detail) text = body.detail;
    else if (body && body.title) text = body.title;
  } catch (_) {
    /* not JSON: keep the status line */
  }
  return text;
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) throw new ApiError(response.status, await problemText(response));
  return response.json();
}

// ---- the WebSocket ----

const socket = {
  ws: null,
  open: false,
  retry: 500,
  queue: [],
  connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const key = apiKey();
    const url = proto + "//" + location.host + "/v1/stream" + (key ? "?key=" + encodeURIComponent(key) : "");
    const ws = new WebSocket(url);
    this.ws = ws;
    setConnection("connecting…");
    ws.onopen = () => {
      this.open = true;
      this.retry = 500;
      setConnection("connected");
      const queued = this.queue.splice(0);
      for (const m of queued) ws.send(JSON.stringify(m));
    };
    ws.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (_) {
        return;
      }
      onSocketMessage(message);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.open = false;
      this.ws = null;
      setConnection("disconnected" + (event.reason ? ": " + event.reason : "") + "; reconnecting…");
      state.analysisId = null;
      setTimeout(() => this.resume(), this.retry);
      this.retry = Math.min(this.retry * 2, 10000);
    };
  },
  // A new socket: what the page follows (its analysis, its job) is asked for again on it, since the server
  // ends everything a closed socket had.
  resume() {
    this.connect();
    if (state.analysing) startAnalysis();
    if (state.job && !state.job.over) subscribeJob();
  },
  send(message) {
    if (this.open && this.ws) {
      this.ws.send(JSON.stringify(message));
      return;
    }
    // Until the socket opens only what is still wanted waits: a stop is moot (an analysis sent on a socket
    // that closed ended with it; one still waiting here is dropped with its stop), and a subscription asked
    // again replaces the one waiting. Otherwise every step through the moves while the socket is down would
    // start an analysis at once on reconnection, past the server's limit a socket.
    if (message.type === "stop") {
      this.queue = this.queue.filter((m) => !(m.type === "analyse" && m.id === message.id));
      return;
    }
    if (message.type === "subscribe") this.queue = this.queue.filter((m) => !(m.type === "subscribe" && m.job === message.job));
    this.queue.push(message);
  },
  // A new socket in place of the open one (a new key): the old one's analysis and subscription end with it.
  reconnect() {
    const ws = this.ws;
    this.ws = null;
    this.open = false;
    this.queue = [];
    state.analysisId = null;
    if (ws) ws.close();
    this.resume();
  },
};

function setConnection(text) {
  $("connection").textContent = text;
}

function onSocketMessage(m) {
  if (m.type === "progress") return onJobProgress(m);
  if (m.id !== state.analysisId) return; // an analysis left behind
  if (m.type === "info") onInfo(m);
  else if (m.type === "bestmove") onBestmove(m);
  else if (m.type === "error") {
    $("analysis-error").textContent = m.detail || m.title || "analysis failed";
    state.analysisId = null;
    showSearchStatus();
    // Busy workers, a full socket or a rate limit pass: the same analysis is asked again while it is still
    // the one wanted (the position unchanged, analysis on). A refused request (422) is not.
    if (m.status === 503 || m.status === 429) retryAnalysis();
  }
}

let retryTimer = null;
let retryWait = 1000;
function retryAnalysis() {
  clearTimeout(retryTimer);
  const version = state.version;
  retryTimer = setTimeout(() => {
    if (version === state.version && state.analysing && !state.analysisId) startAnalysis();
  }, retryWait);
  retryWait = Math.min(retryWait * 2, 10000);
}

// ---- scores ----

// A score of the side to move of the position analysed, as the first player's (the page's point of view: the
// bar, the lines and the annotation graph alike; the API's White is not the first player in every game).
function firstPlayerScore(score) {
  if (!score || !state.game || state.sideToMove === state.game.sides[0]) return score;
  if (score.mate !== undefined) return { mate: -score.mate };
  if (score.cp !== undefined) return { cp: -score.cp };
  return score;
}

// A score {cp}|{mate} (the first player's side) as text.
function scoreText(score) {
  if (!score) return "";
  if (score.mate !== undefined) {
    const moves = Math.ceil(Math.abs(score.mate) / 2);
    return (score.mate > 0 ? "+#" : "-#") + moves;
  }
  const v = score.cp / 100;
  return (v > 0 ? "+" : "") + v.toFixed(2);
}

// A score on a -1000..1000 scale for the bar and the graph.
function scoreScale(score) {
  if (!score) return 0;
  if (score.mate !== undefined) return score.mate > 0 ? 1000 : -1000;
  if (score.cp !== undefined) return Math.max(-1000, Math.min(1000, score.cp));
  return 0;
}

// The share of the bar for the first player: a logistic curve of the score.
function barShare(score) {
  if (score && score.mate !== undefined) return score.mate > 0 ? 1 : 0;
  const cp = score && score.cp !== undefined ? score.cp : 0;
  return 1 / (1 + Math.exp(-cp / 250));
}

// ---- the game list and the setup ----

async function loadGames() {
  try {
    const list = await api("GET", "/v1/games");
    state.games = list.games;
  } catch (e) {
    $("setup-error").textContent = "Could not read the game list: " + e.message;
    return;
  }
  const select = $("game");
  select.textContent = "";
  for (const g of state.games) {
    const option = document.createElement("option");
    option.value = g.name;
    option.textContent = g.name;
    select.appendChild(option);
  }
  const wanted = new URLSearchParams(location.search).get("game") || localStorage.getItem("kibitz.game");
  if (wanted && state.games.some((g) => g.name === wanted)) select.value = wanted;
  chooseGame(select.value);
}

function chooseGame(name) {
  const game = state.games.find((g) => g.name === name);
  if (!game) return;
  state.game = game;
  state.shown = null;
  localStorage.setItem("kibitz.game", name);
  $("position").value = game.start_position;
  $("setup-moves").value = "";
  const formats = new Set(game.position_formats.concat(game.record_formats));
  $("position-formats").textContent = "(" + Array.from(formats).join(", ") + ")";
  const records = game.record_formats.length ? game.record_formats.join(", ") : "none for this game";
  $("record-formats").textContent = "(" + records + ")";
  $("annotate").disabled = game.record_formats.length === 0;
  state.squares = [];
  setPosition(null, [], 0);
}

function splitMoves(text) {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

// The text is a position (then the moves field is played from it) or a game record: the record's first game
// (or the one chosen) is loaded at its end, to step back through.
async function loadSetup(event) {
  if (event) event.preventDefault();
  $("setup-error").textContent = "";
  $("record-games").hidden = true;
  state.records = null;
  const text = $("position").value.trim();
  const moves = splitMoves($("setup-moves").value);
  const root = text === "" ? null : text;
  // Checked before the board changes, so a typo leaves the board as it was.
  let positionError;
  try {
    await api("POST", "/v1/moves", movesBody(root, moves));
    setPosition(root, moves, moves.length);
    return;
  } catch (e) {
    positionError = e;
  }
  if (!(positionError instanceof ApiError) || positionError.status !== 422 || !state.game.record_formats.length) {
    $("setup-error").textContent = positionError.message;
    return;
  }
  let records;
  try {
    records = await api("POST", "/v1/records", { game: state.game.name, text });
  } catch (e) {
    $("setup-error").textContent = "Not a position: " + positionError.message + "\nNor a game record: " + e.message;
    return;
  }
  state.records = records.games;
  const select = $("record-games");
  select.textContent = "";
  records.games.forEach((g, i) => {
    const option = document.createElement("option");
    option.value = String(i);
    const names = [g.tags && g.tags.White, g.tags && g.tags.Black].filter(Boolean).join(" – ");
    option.textContent = "Game " + (g.index + 1) + (names ? ": " + names : "") + " (" + g.moves.length + " moves)";
    select.appendChild(option);
  });
  select.hidden = records.games.length < 2;
  if (records.errors.length) {
    $("setup-error").textContent = records.errors
      .map((e) => "game " + (e.index + 1) + " (line " + e.line + "): " + e.message + (e.token ? ": " + e.token : ""))
      .join("\n");
  }
  loadRecordGame(0);
}

function loadRecordGame(i) {
  const g = state.records && state.records[i];
  if (!g) return;
  setPosition(g.start, g.moves.slice(), g.moves.length);
}

function movesBody(root, moves) {
  const body = { game: state.game.name, moves };
  if (root !== null) body.position = root;
  return body;
}

// ---- the position on the board ----

function setPosition(root, line, cursor) {
  state.root = root;
  state.line = line;
  state.cursor = cursor;
  refresh();
}

function currentMoves() {
  return state.line.slice(0, state.cursor);
}

async function refresh() {
  const version = ++state.version;
  // The old position's analysis is left at once: its lines would be shown (and played) on the new position
  // while the new one is asked for.
  stopAnalysis();
  state.selected = null;
  state.lines = [];
  state.searchInfo = null;
  state.arrowMove = null;
  renderPlayed();
  renderLines();
  $("move-error").textContent = "";
  $("analysis-error").textContent = "";
  let answer;
  try {
    answer = await api("POST", "/v1/moves", movesBody(state.root, currentMoves()));
  } catch (e) {
    if (version !== state.version) return;
    // The board, the legal moves and the turn still show the last position the server answered for: the
    // line goes back to it, so that the next move is played from where the board stands.
    if (state.shown) {
      state.root = state.shown.root;
      state.line = state.shown.line;
      state.cursor = state.shown.cursor;
      renderPlayed();
      // Its analysis was left for the position that could not be read: it starts again.
      if (state.analysing) startAnalysis();
    }
    $("move-error").textContent = e.message;
    return;
  }
  if (version !== state.version) return;
  state.shown = { root: state.root, line: state.line.slice(), cursor: state.cursor };
  state.legal = answer.moves.map((m) => m.move);
  state.position = answer.position;
  state.sideToMove = answer.side_to_move;
  state.outcome = answer.outcome || null;
  renderLegal();
  renderTurn();
  $("position-text").textContent = answer.position;
  drawBoard(version);
  if (state.analysing) startAnalysis();
}

function renderTurn() {
  const o = state.outcome;
  let text;
  if (o) text = "Game over: " + (o.winner ? o.winner + " wins" : "draw") + " (" + o.reason + ")";
  else text = state.sideToMove + " to move";
  $("turn").textContent = text;
}

function renderLegal() {
  const select = $("legal");
  select.textContent = "";
  const shown = state.selected && state.selected.moves ? state.selected.moves : state.legal;
  for (const m of shown) {
    const option = document.createElement("option");
    option.value = m;
    option.textContent = m;
    select.appendChild(option);
  }
  const n = state.legal.length;
  let count = "(" + n + ")";
  if (shown !== state.legal) count = "(" + shown.length + " of " + n + " from " + state.selected.name + ")";
  $("legal-count").textContent = count;
}

function renderPlayed() {
  const list = $("played");
  list.textContent = "";
  state.line.forEach((m, i) => {
    const li = document.createElement("li");
    if (i === state.cursor - 1) li.className = "current";
    else if (i >= state.cursor) li.className = "after";
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = m;
    button.setAttribute("aria-label", "Go to the position after move " + (i + 1) + ", " + m);
    button.addEventListener("click", () => goTo(i + 1));
    li.appendChild(button);
    list.appendChild(li);
  });
  $("nav-start").disabled = state.cursor === 0;
  $("nav-back").disabled = state.cursor === 0;
  $("nav-forward").disabled = state.cursor >= state.line.length;
  $("nav-end").disabled = state.cursor >= state.line.length;
}

function goTo(cursor) {
  const c = Math.max(0, Math.min(state.line.length, cursor));
  if (c === state.cursor) return;
  state.cursor = c;
  refresh();
}

// Play moves at the cursor: the moves after it are replaced unless they are the same.
function play(moves) {
  const line = currentMoves();
  let same = true;
  moves.forEach((m, i) => {
    if (same && state.line[state.cursor + i] !== m) same = false;
  });
  const next = same ? state.line.slice() : line.concat(moves);
  state.line = next;
  state.cursor = line.length + moves.length;
  refresh();
}

function playTyped(event) {
  event.preventDefault();
  const text = $("move").value.trim();
  if (!text) return;
  // The server reads the move (any notation it accepts); a move it refuses names the bad token.
  const check = movesBody(state.root, currentMoves().concat([text]));
  api("POST", "/v1/moves", check).then(
    () => {
      $("move").value = "";
      play([text]);
    },
    (e) => {
      $("move-error").textContent = e.message;
    },
  );
}

function playSelected() {
  const value = $("legal").value;
  if (value) play([value]);
}

// ---- the board picture ----

function boardUrl(arrow) {
  const q = new URLSearchParams();
  q.set("game", state.game.name);
  if (state.root !== null) q.set("position", state.root);
  const moves = currentMoves();
  if (moves.length) q.set("moves", moves.join(","));
  if (arrow) q.set("arrows", arrow);
  if (state.flipped) q.set("flip", "true");
  return "/v1/board.svg?" + q.toString();
}

let drawSeq = 0;
async function drawBoard(version, arrow) {
  const board = $("board");
  // Only the latest picture asked for is drawn: answers come back in any order (an arrow asked for before a
  // flip, a picture of the last position before the arrow of this one).
  const draw = ++drawSeq;
  const current = () => version === state.version && draw === drawSeq;
  let response;
  try {
    response = await fetch(boardUrl(arrow), { headers: headers() });
  } catch (e) {
    if (current()) showFallback("The board picture could not be fetched: " + e.message);
    return;
  }
  if (!current()) return;
  if (!response.ok) {
    // A picture with an arrow refused: the position is drawn without it (the picture asked before the arrow
    // may have been left for it).
    if (arrow) {
      drawBoard(version);
      return;
    }
    const why = await problemText(response);
    if (!current()) return;
    state.boardAvailable = response.status !== 404;
    showFallback("No board picture (" + why + "); the position is shown as text below.");
    return;
  }
  const text = await response.text();
  if (!current()) return;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) {
    showFallback("The board picture could not be read; the position is shown as text below.");
    return;
  }
  const node = document.importNode(svg, true);
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", state.game.name + " board, " + state.sideToMove + " to move");
  board.textContent = "";
  board.appendChild(node);
  state.boardAvailable = true;
  const names = new Set();
  for (const el of node.querySelectorAll("[data-square]")) names.add(el.getAttribute("data-square").toLowerCase());
  state.squares = Array.from(names).sort((a, b) => b.length - a.length);
  markSelection();
}

function showFallback(message) {
  const board = $("board");
  board.textContent = "";
  const p = document.createElement("p");
  p.className = "board-fallback";
  p.textContent = message;
  board.appendChild(p);
}

// The squares a move names, in order, read with the board's own square names (the longest name first:
// `11x18` is 11 then 18, not 1).
function squaresOf(move) {
  const text = move.toLowerCase();
  const out = [];
  let i = 0;
  while (i < text.length) {
    const name = state.squares.find(
      (s) => text.startsWith(s, i) && !(/[0-9]$/.test(s) && /[0-9]/.test(text.charAt(i + s.length))),
    );
    if (name) {
      out.push(name);
      i += name.length;
    } else i += 1;
  }
  return out;
}

function onBoardClick(event) {
  const el = event.target.closest("[data-piece], [data-hand], [data-square], [data-hex]");
  if (!el || state.outcome) return;
  const square = el.getAttribute("data-square");
  // A piece on the board, or one in hand beside it.
  const piece = el.getAttribute("data-piece") || el.getAttribute("data-hand");
  $("move-error").textContent = "";
  // A second click: a move from the selected square to this one.
  if (state.selected && state.selected.square && square) {
    const to = square.toLowerCase();
    const fits = state.selected.moves.filter((m) => {
      const s = squaresOf(m);
      return s.length > 1 && s[s.length - 1] === to;
    });
    if (fits.length === 1) return play([fits[0]]);
    if (fits.length > 1) {
      state.selected = { square: state.selected.square, name: state.selected.name, moves: fits };
      renderLegal();
      $("move-error").textContent = "Several moves end there: choose one in the list.";
      return;
    }
  }
  // A first click on a square: the moves from it.
  if (square && state.squares.length) {
    const from = square.toLowerCase();
    const moves = state.legal.filter((m) => squaresOf(m)[0] === from);
    if (moves.length) {
      state.selected = { square: from, name: square, moves };
      renderLegal();
      markSelection();
      return;
    }
  }
  // A piece named in the moves' notation (pieces beside the board, pieces on a grid without squares).
  if (piece) {
    const moves = state.legal.filter((m) => m.split(/\s+/)[0] === piece);
    if (moves.length) {
      state.selected = { piece, name: piece, moves };
      renderLegal();
      markSelection();
      if (moves.length === 1) $("legal").value = moves[0];
      return;
    }
  }
  state.selected = null;
  renderLegal();
  markSelection();
}

function markSelection() {
  const board = $("board");
  for (const el of board.querySelectorAll(".selected, .target")) el.classList.remove("selected", "target");
  const sel = state.selected;
  if (!sel) return;
  const targets = new Set();
  if (sel.square) {
    for (const m of sel.moves) {
      const s = squaresOf(m);
      if (s.length > 1) targets.add(s[s.length - 1]);
    }
  }
  for (const el of board.querySelectorAll("[data-square]")) {
    const name = el.getAttribute("data-square").toLowerCase();
    if (el.hasAttribute("data-piece")) continue;
    if (sel.square === name) el.classList.add("selected");
    else if (targets.has(name)) el.classList.add("target");
  }
  if (sel.piece) {
    for (const el of board.querySelectorAll("[data-piece], [data-hand]")) {
      if ((el.getAttribute("data-piece") || el.getAttribute("data-hand")) === sel.piece) el.classList.add("selected");
    }
  }
}

// ---- live analysis ----

let analysisSeq = 0;

function analysisSettings() {
  const body = {
    game: state.game.name,
    moves: currentMoves(),
    multipv: Number($("multipv").value) || 1,
  };
  if (state.root !== null) body.position = state.root;
  const depth = Number($("depth").value);
  if (depth > 0) body.depth = depth;
  else body.infinite = true;
  return body;
}

function startAnalysis() {
  clearTimeout(retryTimer);
  stopAnalysis();
  if (!state.game || state.outcome) {
    showSearchStatus();
    return;
  }
  state.lines = [];
  state.searchInfo = null;
  renderLines();
  $("analysis-error").textContent = "";
  const id = "a" + ++analysisSeq;
  state.analysisId = id;
  socket.send(Object.assign({ type: "analyse", id }, analysisSettings()));
  showSearchStatus();
}

function stopAnalysis() {
  if (state.analysisId) socket.send({ type: "stop", id: state.analysisId });
  state.analysisId = null;
}

function onInfo(m) {
  retryWait = 1000;
  state.searchInfo = m;
  if (m.pv && m.pv.length && m.bound === undefined) {
    state.lines[(m.multipv || 1) - 1] = { score: firstPlayerScore(m.score), depth: m.depth, pv: m.pv };
  }
  renderLines();
  showSearchStatus();
}

function onBestmove(m) {
  retryWait = 1000;
  state.analysisId = null;
  if (m.lines && m.lines.length) {
    state.lines = m.lines.map((l) => ({ score: firstPlayerScore(l.score), depth: l.depth, pv: l.moves }));
  }
  // An infinite analysis the client's rate limit could no longer pay for: stopped, and said so.
  if (m.retry_after_s !== undefined) state.analysing = false;
  state.searchInfo = {
    depth: m.depth,
    nodes: m.nodes,
    nps: m.nps,
    time_ms: m.time_ms,
    done: true,
    cached: m.cached,
    limited: m.retry_after_s,
  };
  renderLines();
  showSearchStatus();
}

function showSearchStatus() {
  const i = state.searchInfo;
  const el = $("search-status");
  const button = $("analyse");
  button.textContent = state.analysing ? "Stop" : "Analyse";
  button.setAttribute("aria-pressed", String(state.analysing));
  if (state.outcome) el.textContent = "The game is over.";
  else if (!i) el.textContent = state.analysisId ? "searching…" : state.analysing ? "" : "stopped";
  else {
    const parts = ["depth " + i.depth];
    if (i.nodes !== undefined) parts.push(formatCount(i.nodes) + " nodes");
    if (i.nps) parts.push(formatCount(i.nps) + " nodes/s");
    if (i.limited !== undefined) parts.push("stopped by the rate limit: analyse again in " + i.limited + " s");
    else if (i.done) parts.push(i.cached ? "from the cache" : "done");
    el.textContent = parts.join(" · ");
  }
}

function formatCount(n) {
  if (n >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

// The lines are updated in place (a move that stays the same keeps its button), so that a click is not lost
// to a new depth arriving between the press and the release.
function renderLines() {
  const list = $("lines");
  const shown = state.lines.filter(Boolean);
  while (list.children.length > shown.length) list.lastElementChild.remove();
  shown.forEach((line, k) => {
    let li = list.children[k];
    if (!li) {
      li = document.createElement("li");
      const score = document.createElement("span");
      score.className = "score";
      const depth = document.createElement("span");
      depth.className = "depth";
      li.append(score, depth);
      list.appendChild(li);
    }
    li.dataset.multipv = String(k + 1);
    setText(li.children[0], scoreText(line.score));
    setText(li.children[1], "d" + line.depth);
    const buttons = li.querySelectorAll("button");
    line.pv.forEach((m, i) => {
      let button = buttons[i];
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.dataset.index = String(i);
        li.appendChild(button);
      }
      if (button.textContent !== m) {
        button.textContent = m;
        button.setAttribute("aria-label", "Play line " + (k + 1) + " up to " + m);
      }
    });
    for (let i = line.pv.length; i < buttons.length; i++) buttons[i].remove();
  });
  const best = state.lines[0];
  updateBar(best ? best.score : null);
  const arrow = best && best.pv.length ? best.pv[0] : null;
  if (arrow !== state.arrowMove) {
    state.arrowMove = arrow;
    scheduleArrow();
  }
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

// A click on a move of a line plays the line up to it, as shown.
function onLineClick(event) {
  const button = event.target.closest("#lines button");
  if (!button) return;
  const buttons = Array.from(button.parentElement.querySelectorAll("button"));
  playLine(buttons.slice(0, buttons.indexOf(button) + 1).map((b) => b.textContent));
}

// A line played onto the board up to the move clicked; back and forward step through it.
function playLine(moves) {
  play(moves);
}

let arrowTimer = null;
function scheduleArrow() {
  clearTimeout(arrowTimer);
  if (!state.arrowMove || !state.boardAvailable) return;
  const version = state.version;
  const arrow = state.arrowMove;
  arrowTimer = setTimeout(() => {
    if (version === state.version && arrow === state.arrowMove) drawBoard(version, arrow);
  }, 400);
}

function updateBar(score) {
  const share = barShare(score);
  $("evalbar-fill").style.height = (share * 100).toFixed(1) + "%";
  $("evalbar-text").textContent = score ? scoreText(score) : "";
  $("evalbar").setAttribute("aria-valuenow", String(scoreScale(score)));
  $("evalbar").setAttribute("aria-valuetext", score ? scoreText(score) + " for " + state.game.sides[0] : "no evaluation");
}

// ---- annotation ----

async function annotate(event) {
  event.preventDefault();
  $("annotate-error").textContent = "";
  let text = $("record-text").value;
  const file = $("record-file").files[0];
  if (file) text = await file.text();
  if (!text.trim()) {
    $("annotate-error").textContent = "Choose a record file or paste a record.";
    return;
  }
  const body = { game: state.game.name, text };
  const depth = Number($("annotate-depth").value);
  if (depth > 0) body.depth = depth;
  let accepted;
  try {
    accepted = await api("POST", "/v1/annotations", body);
  } catch (e) {
    $("annotate-error").textContent = e.message;
    return;
  }
  if (accepted.errors && accepted.errors.length) {
    $("annotate-error").textContent = accepted.errors
      .map((e) => "game " + (e.index + 1) + " (line " + e.line + "): " + e.message + (e.token ? ": " + e.token : ""))
      .join("\n");
  }
  state.job = { id: accepted.id, over: false, lastFetch: 0, timer: null };
  state.jobView = null;
  state.annotatedGame = 0;
  state.annotatedPly = null;
  $("annotate-cancel").disabled = false;
  const bar = $("annotate-progress");
  bar.hidden = false;
  bar.max = Math.max(1, accepted.positions);
  bar.value = 0;
  $("annotate-status").textContent = "queued: " + accepted.positions + " positions in " + accepted.games + " game(s)";
  subscribeJob();
  fetchJob();
}

function subscribeJob() {
  if (state.job) socket.send({ type: "subscribe", id: "job-" + state.job.id, job: state.job.id });
}

function onJobProgress(m) {
  const job = state.job;
  if (!job || m.job !== job.id) return;
  const bar = $("annotate-progress");
  bar.max = Math.max(1, m.total);
  bar.value = m.done;
  $("annotate-status").textContent = m.status + ": " + m.done + " of " + m.total + " positions";
  if (["done", "failed", "cancelled"].includes(m.status)) job.over = true;
  scheduleJobFetch();
}

// The job's results, at most twice a second while it runs, and once when it is over.
function scheduleJobFetch() {
  const job = state.job;
  if (!job || job.timer) return;
  const wait = Math.max(0, 500 - (Date.now() - job.lastFetch));
  job.timer = setTimeout(() => {
    job.timer = null;
    fetchJob();
  }, wait);
}

async function fetchJob() {
  const job = state.job;
  if (!job) return;
  job.lastFetch = Date.now();
  let view;
  try {
    view = await api("GET", "/v1/annotations/" + encodeURIComponent(job.id));
  } catch (e) {
    if (state.job !== job) return;
    job.fetchError = e.message;
    $("annotate-error").textContent = e.message;
    return;
  }
  if (state.job !== job) return;
  // A failure to read the job (the server restarting) is over once it reads again.
  if (job.fetchError !== undefined && $("annotate-error").textContent === job.fetchError) {
    $("annotate-error").textContent = "";
  }
  job.fetchError = undefined;
  state.jobView = view;
  const bar = $("annotate-progress");
  bar.max = Math.max(1, view.progress.total);
  bar.value = view.progress.done;
  $("annotate-status").textContent =
    view.status + ": " + view.progress.done + " of " + view.progress.total + " positions" + (view.error ? " (" + view.error + ")" : "");
  const over = ["done", "failed", "cancelled"].includes(view.status);
  if (over) {
    job.over = true;
    $("annotate-cancel").disabled = true;
  } else if (!job.poll) {
    // Progress comes over the socket; a slow poll covers a socket that is down.
    job.poll = setInterval(() => {
      if (job.over || state.job !== job) clearInterval(job.poll);
      else if (!socket.open) fetchJob();
    }, 2000);
  }
  renderAnnotated();
}

async function cancelJob() {
  const job = state.job;
  if (!job) return;
  try {
    await api("DELETE", "/v1/annotations/" + encodeURIComponent(job.id));
  } catch (e) {
    $("annotate-error").textContent = e.message;
  }
  fetchJob();
}

function annotatedGame() {
  const view = state.jobView;
  return view && view.games[state.annotatedGame];
}

function renderAnnotated() {
  const view = state.jobView;
  if (!view) return;
  $("annotated").hidden = false;
  const select = $("annotated-game");
  if (select.options.length !== view.games.length || select.dataset.job !== view.id) {
    select.textContent = "";
    select.dataset.job = view.id;
    view.games.forEach((g, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      // A record without tags (every Hive GameString) has none in the answer.
      const tags = g.tags || {};
      const names = [tags.White, tags.Black].filter(Boolean).join(" – ");
      option.textContent = "Game " + (i + 1) + (names ? ": " + names : "") + (g.result ? " " + g.result : "");
      select.appendChild(option);
    });
  }
  select.value = String(state.annotatedGame);
  const g = annotatedGame();
  if (!g) return;
  const summary = [];
  for (const [side, p] of Object.entries(g.players || {})) {
    const bits = [];
    if (typeof p.accuracy === "number") bits.push("accuracy " + p.accuracy.toFixed(1) + "%");
    for (const k of ["inaccuracies", "mistakes", "blunders"]) if (typeof p[k] === "number") bits.push(p[k] + " " + k);
    summary.push(side + ": " + bits.join(", "));
  }
  $("annotated-summary").textContent = g.error ? "This game could not be read: " + g.error.message : summary.join(" · ");
  renderGraph(g);
  renderMoveTable(g);
  renderBetter(g);
}

// The evaluation after each move, seen from the first player's side.
function firstPlayerValue(move, value) {
  let v;
  if (value.cp !== undefined) v = Math.max(-1000, Math.min(1000, value.cp));
  else if (value.mate !== undefined) v = value.mate > 0 ? 1000 : -1000;
  else if (value.result === "win") v = 1000;
  else if (value.result === "loss") v = -1000;
  else v = 0;
  return move.side === state.jobGameSides()[0] ? v : -v;
}

state.jobGameSides = () => {
  const game = state.games.find((g) => g.name === (state.jobView && state.jobView.game));
  return game ? game.sides : ["white", "black"];
};

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function renderGraph(g) {
  const holder = $("graph");
  holder.textContent = "";
  const moves = g.moves;
  const W = 600;
  const H = 180;
  const pad = 6;
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img", preserveAspectRatio: "none" });
  svg.setAttribute("aria-label", "Evaluation graph over " + moves.length + " moves");
  const n = Math.max(1, ...moves.map((m) => m.ply));
  const x = (ply) => pad + ((W - 2 * pad) * ply) / n;
  const y = (v) => H / 2 - ((H / 2 - pad) * v) / 1000;
  svg.appendChild(svgEl("line", { class: "zero", x1: 0, x2: W, y1: H / 2, y2: H / 2 }));
  if (moves.length) {
    const pts = moves.map((m) => [x(m.ply), y(firstPlayerValue(m, m.eval_after))]);
    const first = moves[0];
    pts.unshift([x(first.ply - 1), y(firstPlayerValue(first, first.eval_before))]);
    const d = pts.map((p, i) => (i ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1)).join(" ");
    const area = d + " L" + pts[pts.length - 1][0].toFixed(1) + " " + H / 2 + " L" + pts[0][0].toFixed(1) + " " + H / 2 + " Z";
    svg.appendChild(svgEl("path", { class: "area", d: area }));
    svg.appendChild(svgEl("path", { class: "curve", d }));
    for (const m of moves) {
      const cx = x(m.ply);
      const cy = y(firstPlayerValue(m, m.eval_after));
      const cls = { inaccuracy: "inaccuracy", mistake: "mistake", blunder: "blunder", mate_missed: "blunder" }[m.class];
      if (cls) {
        const mark = svgEl("circle", { class: "mark mark-" + cls, cx, cy, r: 4, "data-ply": m.ply });
        const title = svgEl("title", {});
        title.textContent = m.ply + ". " + m.move + ": " + m.class.replace("_", " ");
        mark.appendChild(title);
        svg.appendChild(mark);
      }
      // A wide invisible target per move, to click.
      const hit = svgEl("rect", { class: "point", x: cx - (W / n) / 2, y: 0, width: W / n, height: H, "data-ply": m.ply });
      hit.addEventListener("click", () => selectAnnotatedPly(m.ply));
      svg.appendChild(hit);
    }
    if (state.annotatedPly) {
      const cx = x(state.annotatedPly);
      svg.appendChild(svgEl("line", { class: "cursor", x1: cx, x2: cx, y1: 0, y2: H }));
    }
  }
  holder.appendChild(svg);
}

function renderMoveTable(g) {
  const body = $("annotated-moves").tBodies[0];
  body.textContent = "";
  for (const m of g.moves) {
    const tr = document.createElement("tr");
    tr.dataset.ply = String(m.ply);
    tr.dataset.class = m.class;
    if (m.ply === state.annotatedPly) tr.className = "current";
    const cells = [String(m.ply), m.side];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    const moveCell = document.createElement("td");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = m.move;
    button.setAttribute("aria-label", "Show move " + m.ply + ", " + m.move + ", on the board");
    button.addEventListener("click", () => selectAnnotatedPly(m.ply));
    moveCell.appendChild(button);
    tr.appendChild(moveCell);
    const judgement = document.createElement("td");
    const badge = document.createElement("span");
    badge.className = "badge " + m.class;
    badge.textContent = m.class.replace("_", " ");
    judgement.appendChild(badge);
    tr.appendChild(judgement);
    const loss = document.createElement("td");
    loss.textContent = m.loss ? (m.loss / 100).toFixed(2) : "";
    tr.appendChild(loss);
    const better = document.createElement("td");
    if (m.best && m.best !== m.move) better.textContent = m.best_line.slice(0, 6).join(" ");
    tr.appendChild(better);
    body.appendChild(tr);
  }
}

function renderBetter(g) {
  const el = $("better");
  el.textContent = "";
  const m = g.moves.find((x) => x.ply === state.annotatedPly);
  if (!m) return;
  el.append(m.ply + ". " + m.move + " (" + m.class.replace("_", " ") + ")");
  if (m.best && m.best !== m.move && m.best_line.length) {
    el.append(" — better: " + m.best_line.join(" ") + " ");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.textContent = "Show the better line";
    button.addEventListener("click", () => showBetterLine(g, m));
    el.appendChild(button);
  }
}

// The moves of an annotated game played before `ply`, when every earlier move is judged (listed).
function playedBefore(g, ply) {
  const moves = [];
  for (let k = 1; k < ply; k++) {
    const m = g.moves.find((x) => x.ply === k);
    if (!m) return null;
    moves.push(m.move);
  }
  return moves;
}

function loadAnnotatedGame() {
  if (state.jobView && state.game.name !== state.jobView.game) {
    $("game").value = state.jobView.game;
    chooseGame(state.jobView.game);
  }
}

function selectAnnotatedPly(ply) {
  const g = annotatedGame();
  if (!g) return;
  state.annotatedPly = ply;
  loadAnnotatedGame();
  const before = playedBefore(g, ply);
  const all = playedBefore(g, (g.moves.length ? Math.max(...g.moves.map((m) => m.ply)) : 0) + 1);
  if (before) {
    const line = all || before.concat([g.moves.find((x) => x.ply === ply).move]);
    $("position").value = g.start || "";
    setPosition(g.start || null, line, ply);
  }
  renderAnnotated();
}

function showBetterLine(g, m) {
  const before = playedBefore(g, m.ply);
  if (!before) return;
  loadAnnotatedGame();
  $("position").value = g.start || "";
  setPosition(g.start || null, before.concat(m.best_line), before.length);
}

// ---- wiring ----

function init() {
  $("api-key").value = apiKey();
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const key = $("api-key").value.trim();
    if (key) localStorage.setItem("kibitz.key", key);
    else localStorage.removeItem("kibitz.key");
    socket.reconnect();
    // A page that could not even read the game list (no key yet) starts over; otherwise the position is asked
    // again with the key.
    if (!state.games.length) loadGames();
    else if (state.game) refresh();
  });
  $("game").addEventListener("change", (e) => chooseGame(e.target.value));
  $("setup-form").addEventListener("submit", loadSetup);
  $("record-games").addEventListener("change", (e) => loadRecordGame(Number(e.target.value)));
  $("start-position").addEventListener("click", () => {
    $("position").value = state.game.start_position;
    $("setup-moves").value = "";
    setPosition(null, [], 0);
  });
  $("move-form").addEventListener("submit", playTyped);
  $("legal").addEventListener("dblclick", playSelected);
  $("legal").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      playSelected();
    }
  });
  $("board").addEventListener("click", onBoardClick);
  $("lines").addEventListener("click", onLineClick);
  $("nav-start").addEventListener("click", () => goTo(0));
  $("nav-back").addEventListener("click", () => goTo(state.cursor - 1));
  $("nav-forward").addEventListener("click", () => goTo(state.cursor + 1));
  $("nav-end").addEventListener("click", () => goTo(state.line.length));
  document.addEventListener("keydown", (e) => {
    const tag = e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    if (e.key === "ArrowLeft") goTo(state.cursor - 1);
    else if (e.key === "ArrowRight") goTo(state.cursor + 1);
    else if (e.key === "Home") goTo(0);
    else if (e.key === "End") goTo(state.line.length);
    else return;
    e.preventDefault();
  });
  $("flip").addEventListener("click", () => {
    state.flipped = !state.flipped;
    $("flip").setAttribute("aria-pressed", String(state.flipped));
    $("evalbar").classList.toggle("flipped", state.flipped);
    drawBoard(state.version, state.arrowMove);
  });
  $("analyse").addEventListener("click", () => {
    state.analysing = !state.analysing;
    if (state.analysing) startAnalysis();
    else {
      // The search answers a stop with its last lines: they stay shown. With the socket down there is no search
      // to answer (the stop is dropped with the analysis it stops): nothing is searching.
      if (state.analysisId) socket.send({ type: "stop", id: state.analysisId });
      if (!socket.open) state.analysisId = null;
      showSearchStatus();
    }
  });
  for (const id of ["multipv", "depth"]) {
    $(id).addEventListener("change", () => {
      if (state.analysing) startAnalysis();
    });
  }
  $("annotate-form").addEventListener("submit", annotate);
  $("annotate-cancel").addEventListener("click", cancelJob);
  $("annotated-game").addEventListener("change", (e) => {
    state.annotatedGame = Number(e.target.value);
    state.annotatedPly = null;
    renderAnnotated();
  });
  socket.connect();
  loadGames();
}

document.addEventListener("DOMContentLoaded", init);
