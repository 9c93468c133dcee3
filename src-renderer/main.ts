import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import './styles.css'

// The backend is reached through bridge/: window.trainpool in Electron (preload). Browser mode's
// WebSocket bridge installs itself with setBridge() before this mount; App shows a clear error when
// neither exists.
createApp(App).use(createPinia()).mount('#app')
