import dayjs from "dayjs";
import { formatGB } from "../../src/lib/traffic.ts";
import type { UserInfo } from "../../src/modules/user/schema.ts";

/**
 * The dashboard traffic card's line about the part of the balance that expires (nothing when none
 * runs): trial vouchers' traffic and packages bought with a duration alike, hence 限时流量.
 */
export function TrialTrafficNote({ user }: { user: UserInfo }) {
  if (user.trialTraffic <= 0) return null;
  return (
    <p className="card-note trial-traffic-note" data-testid="trial-traffic-note">
      含限时流量 {formatGB(user.trialTraffic)} GB，{dayjs(user.trialExpireTime).format("M月D日 HH:mm")} 到期
    </p>
  );
}
