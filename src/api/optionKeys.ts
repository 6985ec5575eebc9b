/**
 * The run-time list of an option type's names (what the unknown-key checks accept), tied to the
 * type by the compiler: a name the type declares but the list lacks, or a listed name the type
 * does not declare, is a type error. The public type stays the one place an option is written
 * with its documentation; the list cannot drift from it.
 */

/** The type's names the list leaves out. */
type Unlisted<T, K extends readonly unknown[]> = Exclude<keyof T & string, K[number]>;

/**
 * `optionKeys<EngineArgs>()(["block_size", …])`: returns the list as given. Curried so that the
 * type is named and the list's literal type is inferred.
 */
export function optionKeys<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    keys: K & ([Unlisted<T, K>] extends [never] ? unknown : { readonly unlistedOptions: Unlisted<T, K> }),
  ): K => keys;
}
