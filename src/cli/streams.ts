/** Where a command's text goes (injectable for tests). */
export interface Streams {
  out(text: string): void;
  err(text: string): void;
}
