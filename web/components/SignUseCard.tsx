/**
 * The dashboard's 每日签到 card (seed 000 §2, §5, §8). Checks, in the seed's order: logged in, paid,
 * and this browser's cookie (another account already checked in here today, refused locally); the
 * server decides everything else and is the only one that credits. An unpaid customer sees the
 * rewards with the paid-only rule and a way to the shop before trying.
 */
import { useEffect, useState } from "react";
import {
  SIGN_USE_CALL,
  SIGN_USE_INFO_CALL,
  type SignUseInfo,
  SignUseMsg,
  type SignUseResult,
  signUseSuccessText,
} from "../../src/modules/signuse/schema.ts";
import type { UserInfo } from "../../src/modules/user/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { Cookies, getCookie, setCookie } from "../lib/cookies.ts";
import { isAgency, refreshUserInfo, useSession } from "../session.ts";
import { requireLogin } from "./requireLogin.ts";
import { TOAST_MEDIUM, TOAST_SHORT, toast } from "./Toast.tsx";

/** Long enough to outlive the business day it names; it is compared with the server's `today`. */
const COOKIE_DAYS = 2;

/** The rewards and the run so far, for any logged-in customer (only the check-in needs a paid account). */
function useSignUseInfo(user: UserInfo | null) {
  const [info, setInfo] = useState<SignUseInfo | null>(null);
  const userId = user?._id;
  useEffect(() => {
    setInfo(null);
    if (!userId) return;
    let live = true;
    void call(SIGN_USE_INFO_CALL, {}).then((answer) => {
      if (live && answer.code === Code.ok) setInfo(answer.data);
    });
    return () => {
      live = false;
    };
  }, [userId]);
  return [info, setInfo] as const;
}

/** Checks in, or says why not; the result when the server credited it. */
async function signUseNow(user: UserInfo | null, info: SignUseInfo | null): Promise<SignUseResult | null> {
  if (!requireLogin({ message: SignUseMsg.loginRequired }) || !user) return null;
  if (!user.paidUser) {
    toast.error(SignUseMsg.notPaid, TOAST_SHORT);
    return null;
  }
  if (info && getCookie(Cookies.lastSignUse) === info.today) {
    toast.error(SignUseMsg.otherAccount, TOAST_MEDIUM);
    return null;
  }
  const answer = await call(SIGN_USE_CALL, {});
  if (answer.code === Code.ok) {
    setCookie(Cookies.lastSignUse, answer.data.day, { days: COOKIE_DAYS });
    toast.success(signUseSuccessText(answer.data), TOAST_SHORT);
    await refreshUserInfo();
    return answer.data;
  }
  // The envelope client has already spoken for these two.
  if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) {
    toast.error(`${SignUseMsg.failed}：${answer.msg}`, TOAST_SHORT);
  }
  return null;
}

function RunProgress({ info }: { info: SignUseInfo }) {
  const percent = Math.min(100, (info.continueDays / info.continueSignUseDay) * 100);
  return (
    <>
      <div
        className="progress"
        role="progressbar"
        aria-label="连续签到进度"
        aria-valuemin={0}
        aria-valuemax={info.continueSignUseDay}
        aria-valuenow={info.continueDays}
      >
        <div className="progress-bar" style={{ width: `${percent}%` }} />
      </div>
      <p className="card-note">
        已连续签到 {info.continueDays} 天 · 连续签到满 {info.continueSignUseDay} 天额外奖励{" "}
        {info.continueSignReward} MB
      </p>
    </>
  );
}

/**
 * What an unpaid customer is told on the card before trying (seed 000 §5, §6: check-in is for paid
 * users): the rule, and where to become one unless the shop is closed to them (agency mode).
 */
function PaidOnlyNote({ info }: { info: SignUseInfo }) {
  const agency = isAgency(useSession());
  return (
    <p className="card-note sign-use-paid-only">
      {SignUseMsg.notPaid}
      {agency ? "。" : "，购买任意套餐后即可每天签到。"}连续签到满 {info.continueSignUseDay} 天额外奖励{" "}
      {info.continueSignReward} MB。
      {agency ? null : (
        <>
          {" "}
          <a href="/#/shop">去购买</a>
        </>
      )}
    </p>
  );
}

export function SignUseCard({ user }: { user: UserInfo | null }) {
  const [info, setInfo] = useSignUseInfo(user);
  const paid = user?.paidUser === true;
  const [busy, setBusy] = useState(false);
  const done = user?.signUseToday === true;

  async function onClick() {
    setBusy(true);
    try {
      const result = await signUseNow(user, info);
      if (result && info) setInfo({ ...info, continueDays: result.continueDays });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card stat-card sign-use-card" aria-labelledby="card-sign-use">
      <div className="card-head">
        <h2 id="card-sign-use" className="card-title">
          每日签到
        </h2>
        {info && paid ? <span className="badge">连续 {info.continueDays} 天</span> : null}
      </div>
      {info ? (
        <>
          <p className="stat-main">
            <span className="stat-value">{info.signUseRewardTraffic}</span>
            <span className="stat-unit"> MB</span>
          </p>
          <p className="stat-label">每日签到可得永久流量</p>
          {paid ? <RunProgress info={info} /> : <PaidOnlyNote info={info} />}
        </>
      ) : (
        <p className="stat-label sign-use-pitch">付费用户每天签到可领取永久流量，连续签到还有额外奖励。</p>
      )}
      <button
        type="button"
        className="btn btn-primary card-action sign-use-button"
        disabled={done || busy}
        onClick={onClick}
      >
        {done ? "已签到" : "签到"}
      </button>
    </section>
  );
}
