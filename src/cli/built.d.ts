/** Defined (true) in the built CLI by scripts/build.ts; undefined when src/ runs under tsx. */
declare const __AVALAKE_BUILT__: boolean | undefined;
