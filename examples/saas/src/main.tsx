import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { TollgateProvider } from '@tollgate/react';
import '@tollgate/react/styles.css';
import './app.css';
import { App } from './App';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    {/* The server mounted tollgate.sessionRoutes() at /tollgate. */}
    <TollgateProvider baseUrl="/tollgate">
      <App />
    </TollgateProvider>
  </StrictMode>,
);
