/** esbuild bundles imported stylesheets into web/dist/app.css. */
declare module "*.css";
