// @ts-check
// API base URL for the deployed static site. stacks/web.ts replaces the placeholder with the API's
// URL at deploy time; to host the page elsewhere, set it by hand. Left unreplaced (or removed), the
// page calls the API on its own origin. The local runner serves its own config.js that sets nothing.
/** @type {{ VANCETOPE_API_BASE?: string }} */ (/** @type {unknown} */ (window)).VANCETOPE_API_BASE = "__VANCETOPE_API_URL__";
