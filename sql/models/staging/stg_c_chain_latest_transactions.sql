-- description: One row per C-Chain atomic transaction of the network (opt-in stream: the chain's latest transactions from where the first run began).
-- unique: tx_hash
-- incremental: true
-- not_null: network, tx_type, block_timestamp, block_height, block_hash, source_chain, destination_chain
-- accepted_values: tx_type = ImportTx | ExportTx
-- column: tx_hash: the transaction's id
-- column: network: mainnet or fuji
-- column: tx_type: ImportTx or ExportTx, as the API gives it
-- column: block_timestamp: time of the C-Chain block it is in
-- column: block_height: height of the C-Chain block it is in
-- column: block_hash: hash of the C-Chain block it is in
-- column: memo: the transaction's memo
-- column: source_chain: the chain the value leaves (the C-Chain for an ExportTx)
-- column: destination_chain: the chain the value enters (the C-Chain for an ImportTx)
-- column: amounts_unlocked: per asset, the amount the transaction unlocked (smallest unit)
-- column: amounts_created: per asset, the amount the transaction created (smallest unit)
-- column: evm_inputs: ExportTx: the EVM accounts debited (fromAddress, asset)
-- column: evm_outputs: ImportTx: the EVM accounts credited (toAddress, asset)
-- column: consumed_utxos: ImportTx: the atomic UTXOs it spent, as the API gives them
-- column: emitted_utxos: ExportTx: the atomic UTXOs it created, as the API gives them
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('c_chain_latest_transactions') }}
),

newest as (
    select * from {{ newest('source', 'txHash') }}
),

final as (
    select
        txHash as tx_hash,
        network,
        txType as tx_type,
        "timestamp" as block_timestamp,
        blockHeight as block_height,
        blockHash as block_hash,
        memo,
        sourceChain as source_chain,
        destinationChain as destination_chain,
        amountUnlocked as amounts_unlocked,
        amountCreated as amounts_created,
        evmInputs as evm_inputs,
        evmOutputs as evm_outputs,
        consumedUtxos as consumed_utxos,
        emittedUtxos as emitted_utxos,
        _extracted_at as extracted_at
    from newest
)

select * from final
