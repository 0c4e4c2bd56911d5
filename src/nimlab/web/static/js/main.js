// nimlab's page: routes to the screens.

import { route, start } from "./router.js";
import { showSetup } from "./setup.js";
import { showGame } from "./game.js";
import { showPlayers, showRankings, showHistory, showReplay } from "./pages.js";

route(/^\/$/, (main) => showSetup(main), "setup");
route(/^\/game\/([\w-]+)$/, (main, m) => showGame(main, m[1]));
route(/^\/players$/, (main) => showPlayers(main), "players");
route(/^\/rankings$/, (main) => showRankings(main), "rankings");
route(/^\/history$/, (main) => showHistory(main), "history");
route(/^\/history\/(\d+)$/, (main, m) => showReplay(main, Number(m[1])), "history");
start();
