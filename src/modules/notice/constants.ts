/** Kept apart from schema.ts (re-exported there) so the SPA's header does not bring zod into the first page. */

/** How often the header's bell asks for new notices (as often as an open ticket is refreshed). */
export const NOTICE_POLL_MS = 30_000;
