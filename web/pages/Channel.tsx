/**
 * /channel (seed 000 §2 Invite): the programme's text, the invite link with 复制, the invited
 * customers and the rebate records. A user without a channel sees why and the rule.
 */
import { useEffect, useState } from "react";
import { formatYuan } from "../../src/lib/money.ts";
import {
  type ChannelInfo,
  ChannelMsg,
  type InvitedUser,
  type InvitedUsers,
  type RewardEntry,
  type RewardList,
} from "../../src/modules/channel/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { copyToClipboard } from "../components/clipboard.ts";
import { formatDateTime } from "../components/format.ts";
import { LoginPrompt } from "../components/LoginPrompt.tsx";
import { Pager, usePaged } from "../components/Pager.tsx";
import { type Column, Table } from "../components/Table.tsx";
import { useSession } from "../session.ts";

const yuan = (amount: number) => `¥${formatYuan(Math.round(amount * 100))}`;
const percent = (rate: number) => `${Math.round(rate * 10_000) / 100}%`;

const REWARD_COLUMNS: Column<RewardEntry>[] = [
  { key: "time", title: "购买时间", render: (reward) => formatDateTime(reward.buyTime) },
  { key: "consumer", title: "消费用户", render: (reward) => reward.comsumer_name },
  { key: "desc", title: "商品", render: (reward) => reward.desc || "—" },
  { key: "spend", title: "消费金额", className: "num", render: (reward) => yuan(reward.userSpend) },
  { key: "reward", title: "返利", className: "num", render: (reward) => yuan(reward.reward) },
  { key: "left", title: "返利后余额", className: "num", render: (reward) => yuan(reward.left) },
];

const INVITED_COLUMNS: Column<InvitedUser>[] = [
  { key: "email", title: "邮箱", render: (user) => user.email },
  { key: "time", title: "注册时间", render: (user) => formatDateTime(user.createTime) },
];

interface ChannelData {
  info: ChannelInfo;
  invited: InvitedUsers;
  rewards: RewardList;
}

/** The three channel calls of the signed-in user; null while loading or on failure. */
function useChannelData(userId: string): ChannelData | null {
  const [data, setData] = useState<ChannelData | null>(null);
  useEffect(() => {
    if (!userId) return;
    let current = true;
    void Promise.all([
      call("/api/channel/channel_info", {}),
      call("/api/channel/invited_users", {}),
      call("/api/channel/reward_list", {}),
    ]).then(([info, invited, rewards]) => {
      if (!current || info.code !== Code.ok) return;
      setData({
        info: info.data,
        invited: invited.code === Code.ok ? invited.data : { count: 0, list: [] },
        rewards: rewards.code === Code.ok ? rewards.data : { count: 0, totalReward: 0, list: [] },
      });
    });
    return () => {
      current = false;
    };
  }, [userId]);
  return data;
}

/** The programme's text as plain text (an admin's setting, never HTML). */
function Rule({ info }: { info: ChannelInfo }) {
  return (
    <section className="card" aria-labelledby="channel-rule-title">
      <h2 className="card-title" id="channel-rule-title">
        返利规则
      </h2>
      {info.inviteRule ? <p className="channel-rule">{info.inviteRule}</p> : null}
      <p className="card-note">
        邀请的用户通过您的链接注册并付费后，您可获得其实付金额一定比例的返利，返利存入钱包，满{" "}
        {info.min_charge_money} 元可申请提现（USDT）。
      </p>
    </section>
  );
}

function InviteLink({ info }: { info: ChannelInfo }) {
  const channel = info.chanelInfo;
  if (!channel) return null;
  return (
    <section className="card" aria-labelledby="channel-link-title">
      <h2 className="card-title" id="channel-link-title">
        我的邀请链接
      </h2>
      <dl className="channel-facts">
        <div>
          <dt>渠道码</dt>
          <dd>{channel.code}</dd>
        </div>
        {channel.name ? (
          <div>
            <dt>渠道名称</dt>
            <dd>{channel.name}</dd>
          </div>
        ) : null}
        <div>
          <dt>返利比例</dt>
          <dd>{percent(channel.rewardRate)}</dd>
        </div>
        <div>
          <dt>返利期限</dt>
          <dd>用户注册后 {channel.comsumerDuration} 天内的订单</dd>
        </div>
      </dl>
      {info.inviteLink ? (
        <div className="field-row channel-link">
          <input
            className="input"
            readOnly
            value={info.inviteLink}
            aria-label="邀请链接"
            onFocus={(event) => event.currentTarget.select()}
          />
          <button
            type="button"
            className="btn btn-primary"
            aria-label="复制邀请链接"
            onClick={() => void copyToClipboard(info.inviteLink ?? "")}
          >
            复制
          </button>
        </div>
      ) : (
        <p className="card-note">站点地址尚未设置，暂时无法生成邀请链接，请联系管理员。</p>
      )}
    </section>
  );
}

function InvitedList({ invited }: { invited: InvitedUsers }) {
  const { slice, pager } = usePaged(invited.list);
  return (
    <section className="card" aria-labelledby="channel-invited-title">
      <h2 className="card-title" id="channel-invited-title">
        已邀请 <span className="stat-value">{invited.count}</span> 人
      </h2>
      <Table
        columns={INVITED_COLUMNS}
        rows={slice}
        rowKey={(user, i) => `${user.createTime}-${i}`}
        caption="邀请用户"
      />
      {invited.list.length > 5 ? <Pager {...pager} /> : null}
    </section>
  );
}

function RewardRecords({ rewards }: { rewards: RewardList }) {
  const { slice, pager } = usePaged(rewards.list);
  return (
    <section className="card" aria-labelledby="channel-reward-title">
      <h2 className="card-title" id="channel-reward-title">
        返利记录
      </h2>
      <p className="card-note">
        共 {rewards.count} 笔，累计返利 {yuan(rewards.totalReward)}。返利已存入
        <a href="#/wallet">钱包</a>。
      </p>
      <Table
        columns={REWARD_COLUMNS}
        rows={slice}
        rowKey={(reward, i) => `${reward.buyTime}-${i}`}
        caption="返利记录"
      />
      <Pager {...pager} />
    </section>
  );
}

export function ChannelPage() {
  const session = useSession();
  const userId = session.user?._id ?? "";
  const data = useChannelData(userId);

  if (session.ready && !userId) {
    return (
      <div className="page">
        <h1 className="page-title">邀请返利</h1>
        <LoginPrompt title="登录后查看邀请返利" />
      </div>
    );
  }
  if (!data) {
    return (
      <div className="page">
        <h1 className="page-title">邀请返利</h1>
        <p className="card-note">加载中…</p>
      </div>
    );
  }
  const { info } = data;
  return (
    <div className="page">
      <h1 className="page-title">邀请返利</h1>
      {info.openChannel ? null : (
        <p className="channel-banner" role="status">
          {ChannelMsg.closed}：暂停产生新的返利，钱包中已有的返利仍可提现。
        </p>
      )}
      {info.chanelInfo ? null : (
        <section className="card" aria-labelledby="channel-none-title">
          <h2 className="card-title" id="channel-none-title">
            {ChannelMsg.notChannel}
          </h2>
          <p className="card-note">成为渠道用户后即可获得专属邀请链接，请联系客服申请。</p>
        </section>
      )}
      <Rule info={info} />
      {info.chanelInfo ? (
        <>
          <InviteLink info={info} />
          <InvitedList invited={data.invited} />
          <RewardRecords rewards={data.rewards} />
        </>
      ) : null}
    </div>
  );
}
