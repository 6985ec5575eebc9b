/** Types of scripts/build-cli.mjs (plain JavaScript, imported by test/cli/bundle.test.ts). */
export declare function buildCli(options?: { dist?: string }): Promise<string>;
