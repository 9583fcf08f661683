/**
 * The connectivity check url-test groups probe and the guides suggest as FLClash's speed-test URL
 * (seed 000 §2, a standard 204 check). Its own module, free of Node imports, so the SPA shares it.
 */
export const TEST_URL = "http://www.gstatic.com/generate_204";
