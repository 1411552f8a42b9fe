import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const uiDir = fileURLToPath(new URL(".", import.meta.url));

/** The web console's build: dist/ui, hashed asset names (served immutable by src/api/console-assets.ts). */
export default defineConfig({
  root: uiDir,
  base: "/",
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Source maps would double what the server ships; stack traces in the console are rare and short.
    sourcemap: false,
    chunkSizeWarningLimit: 700,
  },
  // `npm run dev:ui`-style work: the API runs on its own port and the dev server forwards to it.
  server: { proxy: { "/v1": "http://127.0.0.1:8080", "/sse": "http://127.0.0.1:8080", "/e/": "http://127.0.0.1:8080" } },
});
