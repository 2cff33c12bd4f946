// Builds the console into host/console/, from which the herald binary embeds it (served at
// /console/). Fixed file names, so that the embedded list in host/src/http/console.rs stays the
// same from build to build and a rebuild of unchanged sources changes no file.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../host/console",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: false,
    rollupOptions: {
      output: {
        entryFileNames: "console.js",
        chunkFileNames: "console-[name].js",
        assetFileNames: "console[extname]",
      },
    },
  },
});
