/** Path of the generated ECharts bundle relative to src/ (and to dist/). */
export declare const ASSET_RELATIVE: string;
/** Absolute path of the generated bundle under src/. */
export declare const SOURCE_ASSET: string;
/** Builds the bundle unless up to date (`force` rebuilds); `dist` also copies it into dist/. */
export declare function buildReportAssets(options?: { dist?: boolean; force?: boolean }): Promise<string>;
