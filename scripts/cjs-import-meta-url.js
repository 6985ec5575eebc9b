// Injected into the CommonJS CLI bundle by build-cli.mjs, which defines `import.meta.url` as
// this binding: CommonJS has no `import.meta`, and in one bundle every module's URL is the
// bundle file's (util/packageRoot.ts walks up from it).
export const bundleUrl = require("node:url").pathToFileURL(__filename).href;
