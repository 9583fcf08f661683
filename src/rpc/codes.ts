/** The response codes of the envelope API (DESIGN §5). Seed codes keep their seed meaning. */
export const Code = {
  ok: 0,
  badInput: 1000,
  alreadyRegistered: 1001,
  notLoggedIn: 1002,
  forbidden: 1003,
  notFound: 1004,
  tooManyRequests: 1005,
  withdrawRefused: 1012,
  couponNotFound: 1016,
  couponUsedUp: 1017,
  couponWrongType: 1020,
  couponTooManyTries: 1021,
  couponTrialNotAllowed: 1022,
  orderHasCoupon: 1025,
  orderNotCancellable: 1026,
  couponExhausted: 1027,
  couponExpired: 1029,
  accountRefused: 1033,
  ticketClosed: 1035,
  pushAmountTooLow: 1037,
  pushNotEnoughTraffic: 1038,
  pushTooFrequent: 1039,
  pushCodeInvalid: 1040,
  /**
   * Issue 30: a login whose password was right for an account with two-factor login; data
   * `{challenge}` for /api/user/login_totp. Only the login call answers it (1040 stays the push
   * code's on /api/push/*, as seed 000 §8 gives it).
   */
  totpCodeNeeded: 1040,
  /** Issue 30: two-factor login is mandatory for staff (totp_required_staff) and this account has not enrolled. */
  totpEnrolmentNeeded: 1041,
  internal: 999,
  /** Never sent by the server: the SPA's code for a request that got no envelope back (seed 000 §7). */
  network: 502,
} as const;

export type CodeValue = (typeof Code)[keyof typeof Code];

/** An expected failure: becomes `{code, data: null, msg}` in the envelope. */
export class RpcError extends Error {
  constructor(
    readonly code: CodeValue,
    message: string,
    /** The envelope's data with the refusal (null unless a caller needs more, as 1040's challenge). */
    readonly data: unknown = null,
  ) {
    super(message);
    this.name = "RpcError";
  }
}
