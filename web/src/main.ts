import './style.css';
import { App } from './app';
import { createSource } from './data';
import './views/all';

const root = document.getElementById('app')!;
void new App(root, createSource()).start();
