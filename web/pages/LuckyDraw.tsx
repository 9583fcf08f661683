/**
 * /lucky_draw (issue 14 §4): the board of prizes, what a draw costs in permanent traffic, and the
 * 抽奖 button. The server picks the prize and the seat; the highlight runs round the board and
 * slows down onto that seat (straight onto it when the visitor prefers reduced motion), then the
 * result dialog opens. A refusal (not enough permanent traffic, no prizes) shows the server's
 * message. Below, the customer's recent draws with their coupon codes.
 */
import { type CSSProperties, useCallback, useEffect, useRef, useState } from "react";
import { formatGB, GB } from "../../src/lib/traffic.ts";
import {
  type BoardPrize,
  type DrawBoard,
  type DrawResult,
  type MyDraw,
  prizeGainText,
} from "../../src/modules/prize/schema.ts";
import { Code } from "../../src/rpc/codes.ts";
import { call } from "../api.ts";
import { Dialog } from "../components/Dialog.tsx";
import { formatDate, formatDateTime } from "../components/format.ts";
import { type Column, Table } from "../components/Table.tsx";
import { highlightPath, ringLayout, stepDelay } from "../lib/drawBoard.ts";
import { refreshUserInfo } from "../session.ts";

const prefersReducedMotion = () => window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function PrizeImage({ prize, className }: { prize: BoardPrize; className: string }) {
  return prize.photoUrl ? (
    <img className={className} src={prize.photoUrl} alt="" />
  ) : (
    <span className={`${className} prize-image-empty`} aria-hidden="true">
      🎁
    </span>
  );
}

function Seat({
  prize,
  index,
  active,
  cell,
}: {
  prize: BoardPrize;
  index: number;
  active: boolean;
  cell: CSSProperties;
}) {
  const gains = prizeGainText(prize);
  return (
    <li
      className={`draw-seat${active ? " draw-seat-active" : ""}`}
      style={cell}
      data-seat={index}
      data-prize={prize._id}
      aria-current={active ? "true" : undefined}
    >
      <PrizeImage prize={prize} className="draw-seat-image" />
      <span className="draw-seat-name">{prize.name}</span>
      {gains ? <span className="draw-seat-gain">{gains}</span> : null}
    </li>
  );
}

function ResultDialog({
  result,
  canDrawAgain,
  onClose,
  onAgain,
}: {
  result: DrawResult | null;
  canDrawAgain: boolean;
  onClose: () => void;
  onAgain: () => void;
}) {
  const prize = result?.prize;
  const gains = prize ? prizeGainText(prize) : "";
  return (
    <Dialog
      open={result !== null}
      onClose={onClose}
      title={gains ? "恭喜中奖" : "抽奖结果"}
      size="sm"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            知道了
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={!canDrawAgain}
            data-autofocus
            onClick={onAgain}
          >
            再抽一次
          </button>
        </>
      }
    >
      {prize ? (
        <div className="draw-result">
          <PrizeImage prize={prize} className="draw-result-image" />
          <p className="draw-result-name">抽中「{prize.name}」</p>
          {gains ? (
            <p className="draw-result-gain">{gains}，已发放到您的账户</p>
          ) : (
            <p>本次没有奖励，再接再厉</p>
          )}
          {result?.couponCode ? (
            <p className="draw-result-coupon">
              折扣券码 <code>{result.couponCode}</code>
              <span className="card-note">仅限本人使用一次，{prize.discountDuration} 天内下单时输入即可</span>
            </p>
          ) : null}
          {prize.desc ? <p className="card-note">{prize.desc}</p> : null}
        </div>
      ) : null}
    </Dialog>
  );
}

/** "+5.00G、+3 天、券 ABCDEF" */
function drawGains(draw: MyDraw): string {
  const parts: string[] = [];
  if (draw.gainTraffic > 0) parts.push(`${formatGB(draw.gainTraffic)}G 流量`);
  if (draw.gainVipTime > 0) parts.push(`${draw.gainVipTime} 天时长`);
  return parts.join("、") || (draw.couponCode ? "" : "无");
}

const DRAW_COLUMNS: Column<MyDraw>[] = [
  { key: "time", title: "时间", render: (draw) => formatDateTime(draw.createTime) },
  { key: "prize", title: "奖品", render: (draw) => draw.prizeName },
  { key: "cost", title: "消耗(G)", render: (draw) => formatGB(draw.cost), className: "num" },
  { key: "gain", title: "获得", render: drawGains },
  {
    key: "coupon",
    title: "折扣券码",
    render: (draw) =>
      draw.couponCode ? (
        <span>
          <code>{draw.couponCode}</code>
          <span className="card-note"> 有效期至 {formatDate(draw.couponExpireTime)}</span>
        </span>
      ) : (
        "—"
      ),
  },
];

export function LuckyDrawPage() {
  const [board, setBoard] = useState<DrawBoard | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const [draws, setDraws] = useState<MyDraw[]>([]);
  const [active, setActive] = useState<number | null>(null);
  const [spinning, setSpinning] = useState(false);
  const [status, setStatus] = useState("");
  const [refusal, setRefusal] = useState("");
  const [result, setResult] = useState<DrawResult | null>(null);
  const mounted = useRef(true);

  const loadBoard = useCallback(async () => {
    const answer = await call("/api/prize/board", {});
    if (!mounted.current) return null;
    if (answer.code !== Code.ok) {
      setLoadFailed(true);
      return null;
    }
    setBoard(answer.data);
    setLoadFailed(false);
    return answer.data;
  }, []);

  const loadDraws = useCallback(async () => {
    const answer = await call("/api/prize/my_draws", {});
    if (mounted.current && answer.code === Code.ok) setDraws(answer.data);
  }, []);

  useEffect(() => {
    mounted.current = true;
    void loadBoard();
    void loadDraws();
    return () => {
      mounted.current = false;
    };
  }, [loadBoard, loadDraws]);

  /** Runs the highlight from where it is onto `seat`; straight there with reduced motion. */
  const runHighlight = async (seatCount: number, seat: number) => {
    if (prefersReducedMotion()) {
      setActive(seat);
      return;
    }
    const path = highlightPath(seatCount, active ?? seatCount - 1, seat);
    for (const [index, next] of path.entries()) {
      if (!mounted.current) return;
      setActive(next);
      await sleep(stepDelay(index, path.length));
    }
  };

  const draw = async () => {
    if (spinning || !board) return;
    setResult(null);
    setRefusal("");
    setSpinning(true);
    setStatus("正在抽奖…");
    const answer = await call("/api/prize/draw", {});
    if (!mounted.current) return;
    if (answer.code !== Code.ok) {
      setSpinning(false);
      setStatus("");
      // Network failures and expired sessions were already toasted by api.ts.
      if (answer.code !== Code.network && answer.code !== Code.notLoggedIn) setRefusal(answer.msg);
      return;
    }
    const won = answer.data;
    // The table changed since the board was shown: show the board the server drew on.
    let seats = board.seats;
    if (seats[won.seat]?._id !== won.prize._id) seats = (await loadBoard())?.seats ?? seats;
    await runHighlight(seats.length, won.seat);
    if (!mounted.current) return;
    setBoard((current) => (current ? { ...current, permanentTraffic: won.permanentTraffic } : current));
    setSpinning(false);
    setStatus(`抽中：${won.prize.name}`);
    setResult(won);
    void loadDraws();
    void refreshUserInfo({ quiet: true });
  };

  if (!board) {
    return (
      <div className="page">
        <h1 className="page-title">幸运抽奖</h1>
        {loadFailed ? null : <div className="spinner page-spinner" role="status" aria-label="加载中" />}
      </div>
    );
  }

  const ring = ringLayout(board.seats.length);
  const costBytes = board.cost * GB;
  const affordable = board.permanentTraffic >= costBytes;
  const empty = board.seats.length === 0;
  const button = (
    <button
      type="button"
      className="btn btn-primary draw-button"
      disabled={spinning || empty}
      aria-describedby="draw-cost"
      onClick={() => void draw()}
    >
      {spinning ? "抽奖中…" : "抽奖"}
    </button>
  );

  return (
    <div className="page lucky-draw">
      <h1 className="page-title">幸运抽奖</h1>
      <section className="card draw-card" aria-labelledby="draw-title">
        <div className="card-head">
          <h2 id="draw-title" className="card-title">
            奖品盘
          </h2>
          <span className="badge">每次 {board.cost}G</span>
        </div>
        <p id="draw-cost" className="card-note">
          每次抽奖消耗 {board.cost}G 永久流量（体验流量不可用），当前永久流量{" "}
          <strong className="draw-balance">{formatGB(board.permanentTraffic)}</strong> G
        </p>
        {empty ? (
          <p className="draw-empty">暂无奖品，敬请期待</p>
        ) : (
          <div
            className="draw-board"
            style={{
              gridTemplateColumns: `repeat(${ring.cols}, minmax(0, 1fr))`,
              gridTemplateRows: `repeat(${ring.rows}, auto)`,
            }}
          >
            <ol className="draw-seats" aria-label="奖品盘">
              {board.seats.map((prize, index) => {
                const cell = ring.cells[index] ?? { row: 1, col: 1 };
                return (
                  <Seat
                    // Seats repeat prizes: the index tells them apart.
                    // biome-ignore lint/suspicious/noArrayIndexKey: a seat is its position on the board
                    key={index}
                    prize={prize}
                    index={index}
                    active={active === index}
                    cell={{ gridRow: cell.row, gridColumn: cell.col }}
                  />
                );
              })}
            </ol>
            {ring.hasCentre ? (
              <div
                className="draw-centre"
                style={{ gridRow: `2 / ${ring.rows}`, gridColumn: `2 / ${ring.cols}` }}
              >
                {button}
              </div>
            ) : null}
          </div>
        )}
        {ring.hasCentre && !empty ? null : <div className="draw-actions">{button}</div>}
        <p className="visually-hidden" role="status" aria-live="polite">
          {status}
        </p>
        {refusal ? (
          <p className="draw-refusal" role="alert">
            {refusal}
            {affordable ? null : (
              <a className="btn btn-small" href="#/shop">
                去购买流量
              </a>
            )}
          </p>
        ) : null}
      </section>
      <section className="card" aria-labelledby="draws-title">
        <div className="card-head">
          <h2 id="draws-title" className="card-title">
            我的抽奖记录
          </h2>
        </div>
        <Table
          columns={DRAW_COLUMNS}
          rows={draws}
          rowKey={(row) => row._id}
          caption="我的抽奖记录"
          empty="暂无抽奖记录"
        />
      </section>
      <ResultDialog
        result={result}
        canDrawAgain={!spinning && board.permanentTraffic >= costBytes}
        onClose={() => setResult(null)}
        onAgain={() => void draw()}
      />
    </div>
  );
}
