import { type ComponentType, lazy, Suspense, useEffect } from "react";
import { Router, useLocation } from "wouter";
import { useHashLocation } from "wouter/use-hash-location";
import { Announcement } from "./components/Announcement.tsx";
import { Footer, Header } from "./components/Header.tsx";
import { Toaster } from "./components/Toast.tsx";
import { go } from "./lib/nav.ts";
import { AgencyPage } from "./pages/Agency.tsx";
import { AgentsPage } from "./pages/Agents.tsx";
import { AppleIdSharePage } from "./pages/AppleIdShare.tsx";
import { AppleIdSignupGuidePage } from "./pages/AppleIdSignupGuide.tsx";
import { AdminAgentLinesPage } from "./pages/admin/AgentLines.tsx";
import { AdminAgentsPage } from "./pages/admin/Agents.tsx";
import { AdminAllTrafficRecordsPage } from "./pages/admin/AllTrafficRecords.tsx";
import { AdminChargesPage } from "./pages/admin/Charges.tsx";
import { AdminCombosPage } from "./pages/admin/Combos.tsx";
import { AdminConfigPage } from "./pages/admin/Config.tsx";
import { AdminCouponRecordsPage } from "./pages/admin/CouponRecords.tsx";
import { AdminCouponsPage } from "./pages/admin/Coupons.tsx";
import { AdminEntrysPage } from "./pages/admin/Entrys.tsx";
import { AdminErrorsPage } from "./pages/admin/Errors.tsx";
import { AdminPermissionsPage } from "./pages/admin/Permissions.tsx";
import { AdminPrizesPage } from "./pages/admin/Prizes.tsx";
import { AdminStatisticsPage } from "./pages/admin/Statistics.tsx";
import { AdminTradeListPage } from "./pages/admin/TradeList.tsx";
import { AdminUserListPage } from "./pages/admin/UserList.tsx";
import { ChannelPage } from "./pages/Channel.tsx";
import { CheckoutPage } from "./pages/Checkout.tsx";
import { ConfirmPage } from "./pages/Confirm.tsx";
import { FeedbackPage } from "./pages/Feedback.tsx";
import { HomePage } from "./pages/Home.tsx";
import { LoginPage } from "./pages/Login.tsx";
import { LuckyDrawPage } from "./pages/LuckyDraw.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { OrderPage } from "./pages/Order.tsx";
import { OrderInfoPage } from "./pages/OrderInfo.tsx";
import { PushPage } from "./pages/Push.tsx";
import { RegisterPage } from "./pages/Register.tsx";
import { ResetPage } from "./pages/Reset.tsx";
import { ShopPage } from "./pages/Shop.tsx";
import { TrafficRecordsPage } from "./pages/TrafficRecords.tsx";
import { UserInfoPage } from "./pages/UserInfo.tsx";
import { WalletPage } from "./pages/Wallet.tsx";
import { WindowsErrorsPage } from "./pages/WindowsErrors.tsx";
import { DEFAULT_DESCRIPTION, ROUTES, type RouteInfo, SITE_NAME } from "./routes.ts";
import { useSession } from "./session.ts";

/** Pages built so far; every other route shows the not-found view. */
const PAGES: Record<string, ComponentType> = {
  "/": HomePage,
  "/tutorial": HomePage,
  "/login": LoginPage,
  "/register": RegisterPage,
  "/confirm": ConfirmPage,
  "/reset": ResetPage,
  "/shop": ShopPage,
  "/order": OrderPage,
  "/orderinfo": OrderInfoPage,
  "/checkout": CheckoutPage,
  "/admin_combos": AdminCombosPage,
  "/admin_permissions": AdminPermissionsPage,
  "/admin_tradeList": AdminTradeListPage,
  "/admin_userlist": AdminUserListPage,
  "/admin_charge": AdminChargesPage,
  "/admin_config": AdminConfigPage,
  "/admin_coupon": AdminCouponsPage,
  "/coupon_records": AdminCouponRecordsPage,
  "/all_traffic_records": AdminAllTrafficRecordsPage,
  "/admin_error": AdminErrorsPage,
  "/agency": AgencyPage,
  "/agents": AgentsPage,
  "/admin_agents": AdminAgentsPage,
  "/admin_entrys": AdminEntrysPage,
  "/admin_agentLines": AdminAgentLinesPage,
  "/traffic_records": TrafficRecordsPage,
  "/channel": ChannelPage,
  "/user_info": UserInfoPage,
  "/admin_prize": AdminPrizesPage,
  "/admin_stastic": AdminStatisticsPage,
  "/lucky_draw": LuckyDrawPage,
  "/feedback": FeedbackPage,
  "/push": PushPage,
  "/wallet": WalletPage,
  "/windows_errors": WindowsErrorsPage,
  "/apple_id_share": AppleIdSharePage,
  "/apple_id_signup_guide": AppleIdSignupGuidePage,
};

// Fetched on the first visit to a guide (its own chunk), so the first download does not grow by them.
const GuidePage = lazy(() =>
  import("./guides/GuidePage.tsx").then((module) => ({ default: module.GuidePage })),
);

function PageSpinner() {
  return (
    <div className="page">
      <div className="spinner page-spinner" role="status" aria-label="加载中" />
    </div>
  );
}

/** The 17 client guides of web/routes.ts: one component over per-client data. */
function GuideRoute() {
  return (
    <Suspense fallback={<PageSpinner />}>
      <GuidePage />
    </Suspense>
  );
}

/** The hash path without its query (`#/login?c=1` → `/login`), trailing slash dropped. */
function useAppLocation(): [string, (to: string, options?: { replace?: boolean }) => void] {
  const [location, navigate] = useHashLocation();
  const bare = location.split("?")[0] ?? "/";
  const path = bare.length > 1 ? bare.replace(/\/+$/, "") : "/";
  return [path || "/", navigate];
}

/** The query inside the hash. */
function useAppSearch(): string {
  const [location] = useHashLocation();
  const q = location.indexOf("?");
  return q < 0 ? "" : location.slice(q + 1);
}

const hrefs = (href: string) => `#${href}`;

function useDocumentMeta(info: RouteInfo | undefined) {
  useEffect(() => {
    document.title = info ? `${info.title} - ${SITE_NAME}` : SITE_NAME;
    let meta = document.querySelector<HTMLMetaElement>('meta[name="description"]');
    if (!meta) {
      meta = document.createElement("meta");
      meta.name = "description";
      document.head.appendChild(meta);
    }
    meta.content = info?.description ?? DEFAULT_DESCRIPTION;
  }, [info]);
}

function Page() {
  const [path] = useLocation();
  const session = useSession();
  const info = ROUTES[path];
  useDocumentMeta(info);
  const needsLogin = Boolean(info?.auth) && session.ready && !session.user;

  useEffect(() => {
    if (needsLogin) go("/login", { replace: true });
  }, [needsLogin]);

  useEffect(() => {
    if (path) window.scrollTo(0, 0);
  }, [path]);

  if (info?.auth && !session.user) return <PageSpinner />;
  const Component = info ? (PAGES[path] ?? (info.guide ? GuideRoute : undefined)) : undefined;
  return Component ? <Component /> : <NotFoundPage />;
}

export function App() {
  return (
    <Router hook={useAppLocation} searchHook={useAppSearch} hrefs={hrefs}>
      <div className="shell">
        <Header />
        <main className="main">
          <Page />
        </main>
        <Footer />
      </div>
      <Announcement />
      <Toaster />
    </Router>
  );
}
