/**
 * undici's Pool class from its own module (http.ts says why); undici declares its types for the
 * package's index only. The class is the one the index exports.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';

  const PoolClass: typeof Pool;
  export default PoolClass;
}
