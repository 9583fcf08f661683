/** The dashboard's way in to 幸运抽奖 (web/pages/LuckyDraw.tsx, its own chunk). */
export function LuckyDrawEntry() {
  return (
    <a className="card draw-entry" href="#/lucky_draw">
      <span className="draw-entry-icon" aria-hidden="true">
        🎁
      </span>
      <span className="draw-entry-text">
        <span className="card-title">幸运抽奖</span>
        <span className="card-note">用永久流量抽取流量、时长和折扣券</span>
      </span>
      <span className="draw-entry-go" aria-hidden="true">
        ›
      </span>
    </a>
  );
}
