/**
 * Loaded before every test file (bunfig.toml [test] preload). Passwords are hashed with argon2id at
 * its least costs (src/modules/user/service.ts): the suite makes about 900 accounts, and at the
 * production costs they alone took about four minutes of CI. Commands the tests spawn inherit it.
 */
process.env.FERRY_INSECURE_FAST_PASSWORD_HASH = "1";
