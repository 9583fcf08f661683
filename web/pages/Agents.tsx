/** 节点列表 /agents (seed 000 §2): what the latency means, then a card per node. */
import type { PublicAgent } from "../../src/modules/node-record/schema.ts";
import { call } from "../api.ts";
import { useRemoteList } from "../components/admin/useRemoteList.ts";
import { latencyLevel, latencyText } from "../components/subscribe/latency.ts";

const loadAgents = () => call("/api/agent/agent_list", {});

function AgentCard({ agent }: { agent: PublicAgent }) {
  const level = latencyLevel(agent.speed);
  return (
    <article className="card agent-card" aria-label={agent.name}>
      <span className="agent-flag" role="img" aria-label={agent.country.name}>
        {agent.country.flag}
      </span>
      <div className="agent-body">
        <h2 className="agent-name">{agent.name}</h2>
        {agent.desc ? <p className="agent-desc">{agent.desc}</p> : null}
      </div>
      <span className={`agent-latency latency-${level}`} title="面板到节点的延迟">
        {latencyText(agent.speed)}
      </span>
    </article>
  );
}

export function AgentsPage() {
  const list = useRemoteList<PublicAgent>(loadAgents);
  return (
    <div className="page">
      <h1 className="page-title">节点列表</h1>
      <section className="card agents-intro" aria-label="节点说明">
        <p>这里列出当前提供服务的节点及其延迟，节点由订阅自动下发，无需手动添加。</p>
        <p className="card-note">
          延迟为服务器到节点的测速结果，每 5 分钟更新一次，仅供参考，实际速度以客户端内测速为准：
          <span className="latency-good">150 ms 以下</span>为优，
          <span className="latency-fair">150–199 ms</span>为良，
          <span className="latency-bad">200 ms 及以上</span>
          较慢；未测速表示暂时没有结果。
        </p>
      </section>
      {!list.loaded ? (
        <div className="spinner page-spinner" role="status" aria-label="加载中" />
      ) : list.rows.length === 0 ? (
        <p className="card agents-empty">暂无记录</p>
      ) : (
        <div className="agent-grid">
          {list.rows.map((agent, index) => (
            // The customer view carries no id; the list is replaced whole, never reordered.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            <AgentCard key={index} agent={agent} />
          ))}
        </div>
      )}
    </div>
  );
}
