import { type ComponentType, Suspense, useEffect } from "react";
import { Router, useLocation } from "wouter";
import { useHashLocation } from "wouter/use-hash-location";
import { TWO_FACTOR_PATH } from "./api.ts";
import { Announcement } from "./components/Announcement.tsx";
import { Footer, Header } from "./components/Header.tsx";
import { Toaster } from "./components/Toast.tsx";
import { lazyPage, setDashboardPreload } from "./lib/lazyPage.tsx";
import { go } from "./lib/nav.ts";
// The login page comes with app.js; every other page, the dashboard too, is fetched on its first
// visit (issue 31: the first visit to /#/login stays under 100 KB).
import { LoginPage } from "./pages/Login.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { DEFAULT_DESCRIPTION, ROUTES, type RouteInfo, SITE_NAME } from "./routes.ts";
import { useSession } from "./session.ts";

function PageSpinner() {
  return (
    <div className="page">
      <div className="spinner page-spinner" role="status" aria-label="加载中" />
    </div>
  );
}

const HomePage = lazyPage(() => import("./pages/Home.tsx").then((m) => m.HomePage));
setDashboardPreload(HomePage.preload);
const AgencyPage = lazyPage(() => import("./pages/Agency.tsx").then((m) => m.AgencyPage));
const AgentsPage = lazyPage(() => import("./pages/Agents.tsx").then((m) => m.AgentsPage));
const AppleIdSharePage = lazyPage(() => import("./pages/AppleIdShare.tsx").then((m) => m.AppleIdSharePage));
const AppleIdSignupGuidePage = lazyPage(() =>
  import("./pages/AppleIdSignupGuide.tsx").then((m) => m.AppleIdSignupGuidePage),
);
const AdminAgentLinesPage = lazyPage(() =>
  import("./pages/admin/AgentLines.tsx").then((m) => m.AdminAgentLinesPage),
);
const AdminAgentsPage = lazyPage(() => import("./pages/admin/Agents.tsx").then((m) => m.AdminAgentsPage));
const AdminAllTrafficRecordsPage = lazyPage(() =>
  import("./pages/admin/AllTrafficRecords.tsx").then((m) => m.AdminAllTrafficRecordsPage),
);
const AdminChargesPage = lazyPage(() => import("./pages/admin/Charges.tsx").then((m) => m.AdminChargesPage));
const AdminCombosPage = lazyPage(() => import("./pages/admin/Combos.tsx").then((m) => m.AdminCombosPage));
const AdminConfigPage = lazyPage(() => import("./pages/admin/Config.tsx").then((m) => m.AdminConfigPage));
const AdminCouponRecordsPage = lazyPage(() =>
  import("./pages/admin/CouponRecords.tsx").then((m) => m.AdminCouponRecordsPage),
);
const AdminCouponsPage = lazyPage(() => import("./pages/admin/Coupons.tsx").then((m) => m.AdminCouponsPage));
const AdminEntrysPage = lazyPage(() => import("./pages/admin/Entrys.tsx").then((m) => m.AdminEntrysPage));
const AdminErrorsPage = lazyPage(() => import("./pages/admin/Errors.tsx").then((m) => m.AdminErrorsPage));
const AdminAuditPage = lazyPage(() => import("./pages/admin/AuditLog.tsx").then((m) => m.AdminAuditPage));
const AdminPermissionsPage = lazyPage(() =>
  import("./pages/admin/Permissions.tsx").then((m) => m.AdminPermissionsPage),
);
const AdminPrizesPage = lazyPage(() => import("./pages/admin/Prizes.tsx").then((m) => m.AdminPrizesPage));
const AdminStatisticsPage = lazyPage(() =>
  import("./pages/admin/Statistics.tsx").then((m) => m.AdminStatisticsPage),
);
const AdminTradeListPage = lazyPage(() =>
  import("./pages/admin/TradeList.tsx").then((m) => m.AdminTradeListPage),
);
const AdminUserListPage = lazyPage(() =>
  import("./pages/admin/UserList.tsx").then((m) => m.AdminUserListPage),
);
const ChannelPage = lazyPage(() => import("./pages/Channel.tsx").then((m) => m.ChannelPage));
const CheckoutPage = lazyPage(() => import("./pages/Checkout.tsx").then((m) => m.CheckoutPage));
const ConfirmPage = lazyPage(() => import("./pages/Confirm.tsx").then((m) => m.ConfirmPage));
const FeedbackPage = lazyPage(() => import("./pages/Feedback.tsx").then((m) => m.FeedbackPage));
const LuckyDrawPage = lazyPage(() => import("./pages/LuckyDraw.tsx").then((m) => m.LuckyDrawPage));
const OrderPage = lazyPage(() => import("./pages/Order.tsx").then((m) => m.OrderPage));
const OrderInfoPage = lazyPage(() => import("./pages/OrderInfo.tsx").then((m) => m.OrderInfoPage));
const PushPage = lazyPage(() => import("./pages/Push.tsx").then((m) => m.PushPage));
const RegisterPage = lazyPage(() => import("./pages/Register.tsx").then((m) => m.RegisterPage));
const ResetPage = lazyPage(() => import("./pages/Reset.tsx").then((m) => m.ResetPage));
const ShopPage = lazyPage(() => import("./pages/Shop.tsx").then((m) => m.ShopPage));
const TrafficRecordsPage = lazyPage(() =>
  import("./pages/TrafficRecords.tsx").then((m) => m.TrafficRecordsPage),
);
const TwoFactorPage = lazyPage(() => import("./pages/TwoFactor.tsx").then((m) => m.TwoFactorPage));
const UserInfoPage = lazyPage(() => import("./pages/UserInfo.tsx").then((m) => m.UserInfoPage));
const WalletPage = lazyPage(() => import("./pages/Wallet.tsx").then((m) => m.WalletPage));
const WindowsErrorsPage = lazyPage(() =>
  import("./pages/WindowsErrors.tsx").then((m) => m.WindowsErrorsPage),
);

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
  "/admin_audit": AdminAuditPage,
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
  "/two_factor": TwoFactorPage,
};

/** The 17 client guides of web/routes.ts: one component over per-client data. */
const GuideRoute = lazyPage(() => import("./guides/GuidePage.tsx").then((m) => m.GuidePage));

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
  // Two-factor login mandatory and not on (issue 30): nowhere but the enrolment page.
  const mustEnrol = session.user?.mustEnrolTotp === true && path !== TWO_FACTOR_PATH;

  useEffect(() => {
    if (needsLogin) go("/login", { replace: true });
  }, [needsLogin]);

  useEffect(() => {
    if (mustEnrol) go(TWO_FACTOR_PATH, { replace: true });
  }, [mustEnrol]);

  useEffect(() => {
    if (path) window.scrollTo(0, 0);
  }, [path]);

  if ((info?.auth && !session.user) || mustEnrol) return <PageSpinner />;
  const Component = info ? (PAGES[path] ?? (info.guide ? GuideRoute : undefined)) : undefined;
  return Component ? (
    <Suspense fallback={<PageSpinner />}>
      <Component />
    </Suspense>
  ) : (
    <NotFoundPage />
  );
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
